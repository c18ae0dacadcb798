// A few hundred malformed or hostile bodies: every answer must be a 4xx OpenAI error, and the
// server must keep serving afterwards.
import { createEngineApp } from "../../src/server/engine_app.ts";
import type { HttpLogger } from "../../src/http/logger.ts";
import { serveApp } from "../../src/http/serve.ts";
import { FakeEngine } from "../_helpers/fake_engine.ts";
import { assert, assertEquals } from "../_assert.ts";

const logged: string[] = [];
const LOGGER: HttpLogger = {
  error: (m, f) => logged.push(`${m} ${f?.error}`),
  warn: (m) => logged.push(m),
};

function rng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) >>> 0;
    let t = seed;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

const WEIRD: unknown[] = [
  null,
  true,
  -1,
  0,
  1.5,
  1e308,
  "",
  "x",
  "\u0000",
  "\ud800",
  [],
  [null],
  [[]],
  {},
  { a: 1 },
  { __proto__: { polluted: true } },
  "a".repeat(10_000),
  [1, "a", null, {}],
  -(2 ** 63),
];

function deep(depth: number, open: string, close: string): string {
  return open.repeat(depth) + close.repeat(depth);
}

/** Bodies (text or bytes) for a path, each certain to be invalid. */
function hostileBodies(random: () => number): [string, string | Uint8Array<ArrayBuffer>][] {
  const out: [string, string | Uint8Array<ArrayBuffer>][] = [];
  const valid: Record<string, Record<string, unknown>> = {
    "/v1/chat/completions": { model: "fake/chat", messages: [{ role: "user", content: "hi" }] },
    "/v1/completions": { model: "fake/chat", prompt: "hi" },
    "/v1/embeddings": { model: "fake/embed", input: "hi" },
  };
  const required: Record<string, string[]> = {
    "/v1/chat/completions": ["model", "messages"],
    "/v1/completions": ["model", "prompt"],
    "/v1/embeddings": ["model", "input"],
  };
  const optional: Record<string, [string, unknown[]][]> = {
    "/v1/chat/completions": [
      ["temperature", [-1, 3, "0.5", [], {}]],
      ["top_p", [2, -0.1, "1"]],
      ["n", [0, 1.5, 500, "2"]],
      ["max_tokens", [0, -5, 1.1, "10"]],
      ["stop", [1, [1], Array(65).fill("a"), { a: 1 }]],
      ["top_logprobs", [5, 21]],
      ["stream_options", [{ include_usage: true }, "yes"]],
      ["messages", [[{ role: "user" }], [{ role: "user", content: [{ type: "image_url" }] }]]],
    ],
    "/v1/completions": [
      ["echo", ["true", 1]],
      ["suffix", ["s", 1]],
      ["logprobs", [true, 99, -1]],
      ["prompt", [[], [[]], [1.5], [-1], [["a"]]]],
      ["best_of", [0, 7]],
    ],
    "/v1/embeddings": [
      ["encoding_format", ["int8", 1, "FLOAT"]],
      ["dimensions", [0, -1, 1.5, 100_000]],
      ["input", [[], [[]], [1.5], [null], [["a"]], Array(3000).fill("a")]],
      ["truncate_prompt_tokens", [0, -7, "x"]],
    ],
  };
  for (const path of Object.keys(valid)) {
    // Each required field removed or replaced by a weird value of the wrong type.
    for (const field of required[path]) {
      const { [field]: _, ...without } = valid[path];
      // An engine server that serves one model of the kind defaults `model` (as vLLM does).
      if (field !== "model") out.push([path, JSON.stringify(without)]);
      for (const w of WEIRD) {
        if (field === "model" && w === null) continue;
        if (field === "model" && typeof w === "string" && w !== "") {
          out.push([path, JSON.stringify({ ...valid[path], [field]: `${w}-unknown` })]);
        } else if (!((field === "input" || field === "prompt") && typeof w === "string")) {
          out.push([path, JSON.stringify({ ...valid[path], [field]: w })]);
        }
      }
    }
    for (const [field, values] of optional[path]) {
      for (const v of values) out.push([path, JSON.stringify({ ...valid[path], [field]: v })]);
    }
    // Numeric fields given values of other types, at random.
    const numeric = path === "/v1/embeddings"
      ? ["dimensions", "truncate_prompt_tokens"]
      : ["temperature", "top_p", "top_k", "seed", "max_tokens", "n", "presence_penalty"];
    for (let i = 0; i < 25; i++) {
      const field = numeric[Math.floor(random() * numeric.length)];
      const n = random();
      const value = [String(n), [n], { value: n }, n > 0.5][Math.floor(random() * 4)];
      out.push([path, JSON.stringify({ ...valid[path], [field]: value })]);
    }
    // Not objects at all, broken JSON, deep nesting, random bytes, invalid UTF-8.
    for (const w of WEIRD.slice(0, 13)) out.push([path, JSON.stringify(w)]);
    out.push([path, "{"], [path, "}"], [path, '{"model":'], [path, "nul"], [path, ""]);
    out.push([path, deep(50_000, "[", "]")]);
    out.push([path, `{"model":"fake/chat","messages":${deep(20_000, "[", "]")}}`]);
    out.push([
      path,
      `{"model":${deep(20_000, '{"a":', "}").replace(/\}+$/, "")}1${"}".repeat(20_000)}}`,
    ]);
    out.push([path, JSON.stringify({ ...valid[path], model: "m".repeat(1_000_000) })]);
    for (let i = 0; i < 10; i++) {
      const bytes = new Uint8Array(1 + Math.floor(random() * 200));
      for (let j = 0; j < bytes.length; j++) bytes[j] = Math.floor(random() * 256);
      bytes[0] = 0xff; // never valid UTF-8 at the start
      out.push([path, bytes]);
    }
    const text = new TextEncoder().encode(JSON.stringify(valid[path]));
    const broken = new Uint8Array([...text.slice(0, 20), 0xc3, 0x28, ...text.slice(20)]);
    out.push([path, broken]);
  }
  return out;
}

Deno.test("hostile bodies get only 4xx OpenAI errors and the server stays up", async () => {
  const app = createEngineApp({
    engines: [new FakeEngine(), new FakeEngine({ kind: "embedding" })],
    logger: LOGGER,
    maxBodyBytes: 2 * 1024 * 1024,
  });
  const cases = hostileBodies(rng(1234));
  assert(cases.length >= 300, `only ${cases.length} cases`);
  for (const [i, [path, body]] of cases.entries()) {
    const res = await app(new Request(`http://localhost${path}`, { method: "POST", body }));
    const text = await res.text();
    assert(
      res.status >= 400 && res.status < 500,
      `case ${i} (${path}): ${res.status} ${text.slice(0, 300)}`,
    );
    const parsed = JSON.parse(text);
    assertEquals(typeof parsed.error.message, "string", `case ${i}`);
    assertEquals(typeof parsed.error.type, "string", `case ${i}`);
    assert(text.length < 5000, `case ${i}: the error echoes too much (${text.length} chars)`);
  }
  assertEquals(logged, []);
});

Deno.test("hostile bodies over a real socket get 4xx and the server keeps answering", async () => {
  const server = serveApp(
    createEngineApp({
      engines: [new FakeEngine(), new FakeEngine({ kind: "embedding" })],
      logger: LOGGER,
      maxBodyBytes: 64 * 1024,
    }),
    { logger: LOGGER },
  );
  try {
    const cases = hostileBodies(rng(99)).filter((_, i) => i % 3 === 0);
    for (const [i, [path, body]] of cases.entries()) {
      const res = await fetch(`${server.url}${path}`, { method: "POST", body });
      const text = await res.text();
      assert(
        res.status >= 400 && res.status < 500,
        `case ${i}: ${res.status} ${text.slice(0, 200)}`,
      );
      assert(JSON.parse(text).error, `case ${i}`);
    }
    const health = await fetch(`${server.url}/health`);
    assertEquals(health.status, 200);
    await health.body?.cancel();
  } finally {
    await server.shutdown();
  }
  assertEquals(logged, []);
});
