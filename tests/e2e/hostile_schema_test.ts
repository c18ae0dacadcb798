// Schemas built to hang, exhaust or crash a constrained decoder (issue 23, items 1-3), sent as a
// client would, to the engine and through the gateway: each is a quick 400 naming the problem,
// the gateway's circuit stays closed, and a neighbour's request is answered meanwhile.
import { assert, assertEquals, assertMatch } from "../_assert.ts";
import { setupLogger } from "../../src/core/logging.ts";
import { structuredStack } from "./_structured_stack.ts";
import { peakRssBytes, startServedStack } from "../_helpers/served_stack.ts";

setupLogger("error");

/** `levels` levels of anyOf over two $refs to the level below: 2^levels paths to one string. */
function overlapping(levels: number) {
  const defs: Record<string, unknown> = { L0: { type: "string", maxLength: 4 } };
  for (let i = 1; i <= levels; i++) {
    const below = { $ref: `#/$defs/L${i - 1}` };
    defs[`L${i}`] = { anyOf: [below, below] };
  }
  return { $defs: defs, $ref: `#/$defs/L${levels}` };
}

function nested(levels: number) {
  let schema: Record<string, unknown> = { type: "string" };
  for (let i = 0; i < levels; i++) schema = { type: "array", items: schema };
  return schema;
}

/** Each hostile schema and what its 400 must say. */
const HOSTILE: [string, unknown, RegExp][] = [
  ["bounds beyond the digit cap", { type: "integer", minimum: 1e16 }, /no number of at most 15/],
  ["10,000 levels of nesting", nested(10_000), /nests more than 64 levels/],
  [
    "an allOf that includes itself",
    { $defs: { A: { allOf: [{ $ref: "#/$defs/A" }] } }, $ref: "#/$defs/A" },
    /nests more than 64 levels/,
  ],
  [
    "a $ref chain that loops inside allOf",
    { $defs: { A: { $ref: "#/$defs/A" } }, allOf: [{ $ref: "#/$defs/A" }] },
    /leads back to itself/,
  ],
  [
    "a 300,000-number enum",
    { enum: Array.from({ length: 300_000 }, (_, i) => i) },
    /more than 1000 enum/,
  ],
  [
    "a required property that is its own object",
    {
      $defs: {
        A: { type: "object", properties: { a: { $ref: "#/$defs/A" } }, required: ["a"] },
      },
      $ref: "#/$defs/A",
    },
    /allows no value of finite size/,
  ],
];

function chat(baseUrl: string, body: Record<string, unknown>): Promise<Response> {
  return fetch(`${baseUrl}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      model: "demo/chat",
      messages: [{ role: "user", content: "go" }],
      max_tokens: 8,
      ...body,
    }),
  });
}

const asSchema = (schema: unknown) => ({
  response_format: { type: "json_schema", json_schema: { name: "hostile", schema } },
});

Deno.test("hostile schemas are quick 400s naming the problem; neighbours are answered", async (t) => {
  const stack = await structuredStack();
  try {
    for (const { name, baseUrl } of stack.targets) {
      for (const [what, schema, message] of HOSTILE) {
        await t.step(`${name}: ${what}`, async () => {
          const neighbour = chat(baseUrl, { seed: 1 });
          const started = performance.now();
          const res = await chat(baseUrl, asSchema(schema));
          const body = await res.json();
          assertEquals(res.status, 400, JSON.stringify(body).slice(0, 300));
          assertEquals(body.error.type, "invalid_request_error");
          assertEquals(body.error.code, "invalid_schema");
          assertMatch(body.error.message, message);
          assertMatch(body.error.param, /^response_format/);
          // Generous for a loaded 2-core machine; the hostile forms took minutes or never ended.
          assert(performance.now() - started < 5_000, "the refusal took over 5 s");
          assertEquals((await neighbour).status, 200);
        });
      }
    }
    await t.step("40 levels of overlapping anyOf compile and generate valid output", async () => {
      for (const { baseUrl } of stack.targets) {
        const res = await chat(baseUrl, { ...asSchema(overlapping(40)), max_tokens: 16 });
        const body = await res.json();
        assertEquals(res.status, 200, JSON.stringify(body));
        const text = JSON.parse(body.choices[0].message.content);
        // maxLength counts characters (code points); JS's length counts UTF-16 units, two for a
        // character beyond the BMP, which random weights sometimes pick.
        assert(typeof text === "string" && [...text].length <= 4, body.choices[0].message.content);
      }
    });
    await t.step("the gateway's circuit stayed closed through the 400s", async () => {
      const res = await chat(stack.targets[1].baseUrl, { seed: 2 });
      assertEquals(res.status, 200);
      await res.body?.cancel();
    });
  } finally {
    await stack.stop();
  }
});

Deno.test("an engine process stays under 1.5 GiB through every hostile schema", async () => {
  // A process of its own (`svc llm serve`), so its peak resident memory is the engine's alone.
  const stack = await startServedStack();
  try {
    for (const [what, schema] of HOSTILE) {
      const res = await chat(stack.state.gatewayUrl!, asSchema(schema));
      assertEquals(res.status, 400, what);
      await res.body?.cancel();
    }
    const peak = await peakRssBytes(stack.state.llmPid!);
    assert(peak < 1.5 * 2 ** 30, `the engine's peak resident memory: ${peak / 2 ** 20} MiB`);
  } finally {
    await stack.stop();
  }
});
