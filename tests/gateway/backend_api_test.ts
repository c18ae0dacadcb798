// The tokenizer endpoints through the gateway (issue 22, item 10): sent to the backend's root, as
// Svc and vLLM serve them, and in llama.cpp's own shape to a backend marked `server: "llama.cpp"`.
// A stand-in answers like each server for the mapping; a real llama-server, when one is built
// (bench/build_llama_server.sh), checks it against llama.cpp itself.
import { assert, assertEquals } from "../_assert.ts";
import { startGateway } from "../../src/gateway/gateway_server.ts";
import type { HttpLogger } from "../../src/http/logger.ts";
import { findLlamaServer, LlamaServer } from "../../bench/_llama_server.ts";
import { benchGguf } from "../../bench/_llama_server.ts";
import { TEST_MODEL_CACHE } from "../_helpers/demo_engines.ts";

const QUIET: HttpLogger = { error: () => {}, warn: () => {} };

/** A server with vLLM's (root `/tokenize`, `prompt`) or llama.cpp's (`content`) tokenizer API. */
function standIn(shape: "vllm" | "llama.cpp") {
  const seen: { path: string; body: Record<string, unknown> }[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const path = new URL(req.url).pathname;
    if (path === "/health") return new Response("{}");
    if (path !== "/tokenize" && path !== "/detokenize") return new Response("no", { status: 404 });
    const body = await req.json();
    seen.push({ path, body });
    const text = shape === "vllm" ? body.prompt : body.content;
    if (path === "/tokenize") {
      const tokens = [...String(text)].map((c) => c.charCodeAt(0));
      return Response.json(shape === "vllm" ? { count: tokens.length, tokens } : { tokens });
    }
    const decoded = String.fromCharCode(...body.tokens);
    return Response.json(shape === "vllm" ? { prompt: decoded } : { content: decoded });
  });
  const port = (server.addr as Deno.NetAddr).port;
  return { baseUrl: `http://127.0.0.1:${port}/v1`, seen, stop: () => server.shutdown() };
}

async function post(baseUrl: string, path: string, body: unknown) {
  const res = await fetch(`${baseUrl}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

Deno.test("gateway /tokenize and /detokenize reach the backend's root, in llama.cpp's shape there", async () => {
  const vllm = standIn("vllm");
  const llama = standIn("llama.cpp");
  const gw = await startGateway({
    logger: QUIET,
    backends: [
      { id: "v", baseUrl: vllm.baseUrl, kind: "llm", models: ["m-vllm"] },
      { id: "l", baseUrl: llama.baseUrl, kind: "llm", models: ["m-llama"], server: "llama.cpp" },
    ],
  });
  try {
    for (const [model, stand] of [["m-vllm", vllm], ["m-llama", llama]] as const) {
      const tokenized = await post(gw.baseUrl, "/tokenize", { model, prompt: "hi" });
      assertEquals(tokenized, { status: 200, body: { count: 2, tokens: [104, 105] } }, model);
      const detokenized = await post(gw.baseUrl, "/detokenize", { model, tokens: [104, 105] });
      assertEquals(detokenized, { status: 200, body: { prompt: "hi" } }, model);
      assertEquals(stand.seen.map((s) => s.path), ["/tokenize", "/detokenize"]);
    }
    assertEquals(llama.seen[0].body, { content: "hi", add_special: true, parse_special: true });
    const chat = await post(gw.baseUrl, "/tokenize", {
      model: "m-llama",
      messages: [{ role: "user", content: "hi" }],
    });
    assertEquals([chat.status, chat.body.error.param], [400, "messages"]);
  } finally {
    await gw.stop();
    await vllm.stop();
    await llama.stop();
  }
});

const llamaServer = await findLlamaServer();

Deno.test({
  name: "gateway /tokenize through a real llama-server matches llama-server's own answer",
  ignore: llamaServer === undefined, // built by bench/build_llama_server.sh; not in CI
  async fn() {
    const gguf = await benchGguf(TEST_MODEL_CACHE, "demo/chat-bench", "F16");
    const server = await LlamaServer.start(llamaServer!, gguf, { parallel: 1, threads: 1 });
    const gw = await startGateway({
      logger: QUIET,
      backends: [{
        id: "llama",
        baseUrl: `${server.baseUrl}/v1`,
        kind: "llm",
        models: ["demo"],
        server: "llama.cpp",
      }],
    });
    try {
      const text = "Hello there, tokenizer!";
      const direct = await server.tokenize(text, { addSpecial: true });
      const tokenized = await post(gw.baseUrl, "/tokenize", { model: "demo", prompt: text });
      assertEquals(tokenized.body, { count: direct.length, tokens: direct });
      const plain = await post(gw.baseUrl, "/tokenize", {
        model: "demo",
        prompt: text,
        add_special_tokens: false,
      });
      const withoutSpecial = await server.tokenize(text);
      assertEquals(plain.body.tokens, withoutSpecial);
      const back = await post(gw.baseUrl, "/detokenize", { model: "demo", tokens: withoutSpecial });
      assertEquals(back.status, 200);
      assert(back.body.prompt.includes("tokenizer"), back.body.prompt);
    } finally {
      await gw.stop();
      await server.stop();
    }
  },
});
