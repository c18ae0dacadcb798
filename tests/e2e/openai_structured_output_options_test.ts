// vLLM's structured_outputs options disable_any_whitespace and disable_additional_properties (and
// vLLM 0.8's spelling of them in guided_decoding_backend) sent as extra body fields by the official
// `openai` SDK, on chat and legacy completions, streamed and not, against the engine server and
// through the gateway. Demo model, random weights: only the constraint shapes the output, so each
// check also runs without the option and shows that the model then does what the option forbids.
import OpenAI from "openai";
import { assert, assertEquals } from "../_assert.ts";
import { setupLogger } from "../../src/core/logging.ts";
import { validatorFor } from "../engine/constrained/_validator.ts";
import { PERSON_SCHEMA, structuredStack } from "./_structured_stack.ts";

setupLogger("error");

const MODEL = "demo/chat";
const SEEDS = [1, 2, 3, 4];
const ASK = [{ role: "user" as const, content: "Answer." }];

// No additionalProperties anywhere: `tags` lists no properties (so any keys, unless closed),
// `meta` lists one.
const OPEN_SCHEMA = {
  type: "object",
  properties: {
    name: { type: "string", minLength: 1, maxLength: 8 },
    tags: { type: "object", properties: {} },
    meta: { type: "object", properties: { id: { type: "integer", minimum: 0, maximum: 99 } } },
  },
  required: ["name", "tags", "meta"],
};

type Body = Record<string, unknown>;
type Output = { text: string; finish: string };

// The text with its JSON strings emptied (an unfinished one at the end too): what is left is
// punctuation, numbers and literals, where whitespace would be insignificant.
function outsideStrings(text: string): string {
  return text.replace(/"(?:[^"\\]|\\.)*(?:"|$)/g, '""');
}

// JSON's layout: strings emptied and numbers as 0 (the grammar may write `1e2` where
// JSON.stringify writes `100`), so two texts compare equal when only whitespace could differ.
function layout(text: string): string {
  return outsideStrings(text).replace(/-?\d+(\.\d+)?([eE][+-]?\d+)?/g, "0");
}

// The schema as disable_additional_properties reads it (vLLM's guidance backend): an object
// schema with properties and no additionalProperties gets additionalProperties: false.
function closedSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(closedSchema);
  if (typeof schema !== "object" || schema === null) return schema;
  const out = Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, closedSchema(v)]));
  if ("properties" in out && !("additionalProperties" in out)) out.additionalProperties = false;
  return out;
}

Deno.test("openai SDK: structured_outputs disable_any_whitespace and disable_additional_properties", async (t) => {
  const stack = await structuredStack();
  try {
    for (const { name, baseUrl } of stack.targets) {
      const client = new OpenAI({ baseURL: baseUrl, apiKey: "unused", maxRetries: 0 });
      // Chat and legacy completions, streamed and not: one output each.
      const outputs = async (body: Body): Promise<Output[]> => {
        const chat = { model: MODEL, messages: ASK, max_tokens: 400, ...body };
        const completion = await client.chat.completions.create(
          chat as unknown as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming,
        );
        const all: Output[] = [{
          text: completion.choices[0].message.content!,
          finish: completion.choices[0].finish_reason,
        }];
        const stream = await client.chat.completions.create(
          { ...chat, stream: true } as unknown as OpenAI.Chat.ChatCompletionCreateParamsStreaming,
        );
        let text = "", finish = "";
        for await (const chunk of stream) {
          text += chunk.choices[0]?.delta.content ?? "";
          finish = chunk.choices[0]?.finish_reason ?? finish;
        }
        all.push({ text, finish });
        const legacy = { model: MODEL, prompt: "Say:", max_tokens: 400, ...body };
        const done = await client.completions.create(
          legacy as unknown as OpenAI.CompletionCreateParamsNonStreaming,
        );
        all.push({ text: done.choices[0].text, finish: done.choices[0].finish_reason });
        const chunks = await client.completions.create(
          { ...legacy, stream: true } as unknown as OpenAI.CompletionCreateParamsStreaming,
        );
        text = "", finish = "";
        for await (const chunk of chunks) {
          text += chunk.choices[0]?.text ?? "";
          finish = chunk.choices[0]?.finish_reason ?? finish;
        }
        all.push({ text, finish });
        return all;
      };

      await t.step(`${name}: disable_any_whitespace writes compact JSON`, async () => {
        const validate = validatorFor(PERSON_SCHEMA);
        let spaced = 0;
        for (const seed of SEEDS) {
          const compact = [
            ...await outputs({
              structured_outputs: { json: PERSON_SCHEMA, disable_any_whitespace: true },
              seed,
            }),
            ...await outputs({
              guided_json: PERSON_SCHEMA,
              guided_decoding_backend: "xgrammar:disable-any-whitespace",
              seed,
            }),
          ];
          for (const { text, finish } of compact) {
            assertEquals(finish, "stop", text);
            const value = JSON.parse(text);
            assertEquals(validate(value), null, text);
            assertEquals(layout(text), layout(JSON.stringify(value)), text);
            assert(!/\s/.test(outsideStrings(text)), text);
          }
          // The same requests without the option: random weights pick ", " and ": " at times.
          for (const { text } of await outputs({ guided_json: PERSON_SCHEMA, seed })) {
            if (/\s/.test(outsideStrings(text))) spaced++;
          }
        }
        assert(spaced > 0, "without disable_any_whitespace no output held a space");
      });

      await t.step(
        `${name}: disable_any_whitespace beside response_format json_object`,
        async () => {
          // A free JSON object seldom finishes within max_tokens: what was written is checked.
          // These seeds write a few members.
          let spaced = 0;
          for (const seed of [6, 22, 24, 26]) {
            const body = { response_format: { type: "json_object" }, seed, max_tokens: 150 };
            const compact = await outputs({
              ...body,
              structured_outputs: { disable_any_whitespace: true },
            });
            for (const { text, finish } of compact) {
              assert(text.startsWith("{"), text);
              assert(!/\s/.test(outsideStrings(text)), text);
              if (finish === "stop") {
                assertEquals(layout(text), layout(JSON.stringify(JSON.parse(text))));
              }
            }
            for (const { text } of await outputs(body)) {
              if (/\s/.test(outsideStrings(text))) {
                spaced++;
              }
            }
          }
          assert(spaced > 0, "without disable_any_whitespace no output held a space");
        },
      );

      await t.step(
        `${name}: disable_additional_properties adds no keys the schema does not list`,
        async () => {
          const validate = validatorFor(closedSchema(OPEN_SCHEMA));
          let extra = 0;
          for (const seed of SEEDS) {
            const closed = [
              ...await outputs({
                structured_outputs: { json: OPEN_SCHEMA, disable_additional_properties: true },
                seed,
              }),
              ...await outputs({
                guided_json: OPEN_SCHEMA,
                guided_decoding_backend: "guidance:no-additional-properties",
                seed,
              }),
            ];
            for (const { text, finish } of closed) {
              assertEquals(finish, "stop", text);
              assertEquals(validate(JSON.parse(text)), null, text);
            }
            // Without it `tags` takes any keys, and random weights write some (often without
            // finishing their values: the key is what counts).
            const open = await outputs({ guided_json: OPEN_SCHEMA, seed, max_tokens: 60 });
            for (const { text } of open) if (/"tags":\s*\{\s*"/.test(text)) extra++;
          }
          assert(extra > 0, "without disable_additional_properties no output had an extra key");
        },
      );
    }
  } finally {
    await stack.stop();
  }
});
