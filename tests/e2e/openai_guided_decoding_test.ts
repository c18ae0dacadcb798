// vLLM's guided decoding fields (guided_json/regex/choice, structured_outputs) sent as extra body
// fields by the official `openai` SDK, against the engine server and through the gateway (demo
// model, random weights: only the constraint makes the output valid). Oracles: Ajv for schemas,
// RegExp (`u` flag, anchored) for regexes, membership for choices; several seeds, streamed and not.
import OpenAI from "openai";
import { assert, assertEquals, assertMatch, assertRejects } from "../_assert.ts";
import { setupLogger } from "../../src/core/logging.ts";
import { validatorFor } from "../engine/constrained/_validator.ts";
import { PERSON_SCHEMA, structuredStack } from "./_structured_stack.ts";

setupLogger("error");

const MODEL = "demo/chat";
const SEEDS = [1, 2, 3, 4];
// Bounded, so the random model always finishes them; quotes, backslashes, newlines and
// characters of several bytes are plain text here.
const REGEXES = [
  "\\(\\d{3}\\) \\d{3}-\\d{4}",
  "(red|green|blue)-[0-9]{2,3}",
  '"[a-zé]{1,4}"\\\\?\\n(yes|no)',
  "😀{1,2}[A-Z]?",
];
const CHOICES = ["positive", "negative", "neutral", "pos", "😀 happy"];
const ASK = [{ role: "user" as const, content: "Answer." }];

// The guided fields are not in the SDK's types: it sends every field of the body as it is.
type Body = Record<string, unknown>;

function whole(source: string): RegExp {
  return new RegExp(`^(?:${source})$`, "u");
}

Deno.test("openai SDK: vLLM's guided decoding fields against the engine and through the gateway", async (t) => {
  const stack = await structuredStack();
  try {
    for (const { name, baseUrl } of stack.targets) {
      const client = new OpenAI({ baseURL: baseUrl, apiKey: "unused", maxRetries: 0 });
      const chat = async (body: Body): Promise<{ text: string; finish: string }[]> => {
        const params = { model: MODEL, messages: ASK, max_tokens: 200, ...body };
        const completion = await client.chat.completions.create(
          params as unknown as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming,
        );
        return completion.choices.map((c) => ({
          text: c.message.content!,
          finish: c.finish_reason,
        }));
      };
      const chatStream = async (body: Body): Promise<{ text: string; finish: string }> => {
        const params = { model: MODEL, messages: ASK, max_tokens: 200, ...body, stream: true };
        const stream = await client.chat.completions.create(
          params as unknown as OpenAI.Chat.ChatCompletionCreateParamsStreaming,
        );
        let text = "", finish = "";
        for await (const chunk of stream) {
          text += chunk.choices[0]?.delta.content ?? "";
          finish = chunk.choices[0]?.finish_reason ?? finish;
        }
        return { text, finish };
      };
      const complete = async (body: Body, stream: boolean): Promise<string[]> => {
        const params = { model: MODEL, prompt: "Say:", max_tokens: 200, ...body };
        if (!stream) {
          const completion = await client.completions.create(
            params as unknown as OpenAI.CompletionCreateParamsNonStreaming,
          );
          return completion.choices.map((c) => {
            assertEquals(c.finish_reason, "stop");
            return c.text;
          });
        }
        const chunks = await client.completions.create(
          { ...params, stream: true } as unknown as OpenAI.CompletionCreateParamsStreaming,
        );
        let text = "";
        for await (const chunk of chunks) text += chunk.choices[0]?.text ?? "";
        return [text];
      };

      await t.step(`${name}: guided_json and structured_outputs.json validate`, async () => {
        const validate = validatorFor(PERSON_SCHEMA);
        for (const seed of SEEDS.slice(0, 2)) {
          const bodies = [
            { guided_json: PERSON_SCHEMA },
            { structured_outputs: { json: JSON.stringify(PERSON_SCHEMA) } },
          ];
          for (const body of bodies) {
            const [{ text, finish }] = await chat({ ...body, seed, max_tokens: 400 });
            assertEquals(finish, "stop");
            assertEquals(validate(JSON.parse(text)), null, text);
          }
          const streamed = await chatStream({ guided_json: PERSON_SCHEMA, seed, max_tokens: 400 });
          assertEquals(validate(JSON.parse(streamed.text)), null, streamed.text);
          const [text] = await complete(
            { guided_json: PERSON_SCHEMA, seed, max_tokens: 400 },
            true,
          );
          assertEquals(validate(JSON.parse(text)), null, text);
        }
      });

      await t.step(`${name}: guided_regex output matches the whole regex`, async () => {
        for (const source of REGEXES) {
          const regex = whole(source);
          const outputs = await chat({ guided_regex: source, n: SEEDS.length, seed: 5 });
          for (const { text, finish } of outputs) {
            assertEquals(finish, "stop");
            assert(regex.test(text), `${source}: ${JSON.stringify(text)}`);
          }
          const streamed = await chatStream({ structured_outputs: { regex: source }, seed: 6 });
          assertEquals(streamed.finish, "stop");
          assert(regex.test(streamed.text), `${source}: ${JSON.stringify(streamed.text)}`);
          for (const [i, stream] of [false, true].entries()) {
            for (const text of await complete({ guided_regex: source, seed: 7 + i }, stream)) {
              assert(regex.test(text), `${source}: ${JSON.stringify(text)}`);
            }
          }
        }
      });

      await t.step(`${name}: guided_choice output is exactly one of the choices`, async () => {
        const seen = new Set<string>();
        for (const seed of SEEDS) {
          const outputs = [
            ...(await chat({ guided_choice: CHOICES, seed, n: 2 })).map((o) => o.text),
            (await chatStream({ structured_outputs: { choice: CHOICES }, seed })).text,
            ...await complete({ guided_choice: CHOICES, seed }, false),
            ...await complete({ structured_outputs: { choice: CHOICES }, seed }, true),
          ];
          for (const text of outputs) {
            assert(CHOICES.includes(text), JSON.stringify(text));
            seen.add(text);
          }
        }
        assert(seen.size > 1, `only ${[...seen]}`);
      });

      await t.step(`${name}: structured_outputs.json_object gives a JSON object`, async () => {
        // Random weights seldom close a free string soon: seed 15 happens to finish quickly.
        const [{ text, finish }] = await chat({
          structured_outputs: { json_object: true },
          seed: 15,
          max_tokens: 120,
        });
        assertEquals(finish, "stop");
        const value = JSON.parse(text);
        assert(typeof value === "object" && value !== null && !Array.isArray(value), text);
      });

      await t.step(`${name}: what cannot be honoured is a 400 naming the field`, async () => {
        const cases: [Body, string, RegExp][] = [
          [{ guided_grammar: "root ::= 'a'" }, "guided_grammar", /not supported/],
          [{ structured_outputs: { grammar: "start: 'a'" } }, "structured_outputs.grammar", /Lark/],
          [{ guided_json: PERSON_SCHEMA, guided_regex: "a" }, "guided_regex", /guided_json/],
          [
            { guided_choice: ["a"], response_format: { type: "json_object" } },
            "guided_choice",
            /response_format/,
          ],
          [{ guided_regex: "a(?=b)" }, "guided_regex", /lookaround/],
          [{ guided_json: { type: "number", not: { const: 5 } } }, "guided_json.not", /'not'/],
        ];
        for (const [body, param, message] of cases) {
          const err = await assertRejects(() => chat(body), OpenAI.BadRequestError);
          assertEquals(err.param, param);
          assertMatch(err.message, message);
        }
        const err = await assertRejects(
          () => complete({ structured_outputs: {} }, false),
          OpenAI.BadRequestError,
        );
        assertEquals(err.param, "structured_outputs");
      });
    }
  } finally {
    await stack.stop();
  }
});
