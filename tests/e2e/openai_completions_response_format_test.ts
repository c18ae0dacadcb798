// `response_format` on legacy `/v1/completions` (vLLM takes it there), sent by the official `openai`
// SDK against the engine server and through the gateway: the demo model has random weights, so only
// constrained decoding makes the text valid. Oracle: Ajv.
import OpenAI from "openai";
import { assert, assertEquals, assertRejects } from "../_assert.ts";
import { setupLogger } from "../../src/core/logging.ts";
import { validatorFor } from "../engine/constrained/_validator.ts";
import { PERSON_SCHEMA, structuredStack } from "./_structured_stack.ts";

setupLogger("error");

const MODEL = "demo/chat";
const PROMPT = "Describe someone:";
const PERSON_FORMAT = {
  type: "json_schema",
  json_schema: { name: "person", schema: PERSON_SCHEMA, strict: true },
};

// The SDK's completion types have no `response_format`: it sends every body field as it is.
type Body = Record<string, unknown>;

Deno.test("openai SDK: response_format on legacy completions, engine and gateway", async (t) => {
  const stack = await structuredStack();
  try {
    for (const { name, baseUrl } of stack.targets) {
      const client = new OpenAI({ baseURL: baseUrl, apiKey: "unused", maxRetries: 0 });
      const complete = async (body: Body) =>
        (await client.completions.create(
          {
            model: MODEL,
            prompt: PROMPT,
            max_tokens: 400,
            ...body,
          } as unknown as OpenAI.CompletionCreateParamsNonStreaming,
        )).choices;
      const stream = async (body: Body): Promise<{ text: string; finish: string }> => {
        const chunks = await client.completions.create(
          {
            model: MODEL,
            prompt: PROMPT,
            max_tokens: 400,
            ...body,
            stream: true,
          } as unknown as OpenAI.CompletionCreateParamsStreaming,
        );
        let text = "", finish = "";
        for await (const chunk of chunks) {
          text += chunk.choices[0]?.text ?? "";
          finish = chunk.choices[0]?.finish_reason ?? finish;
        }
        return { text, finish };
      };

      await t.step(`${name}: json_schema output validates, streamed and not`, async () => {
        const validate = validatorFor(PERSON_SCHEMA);
        const choices = await complete({ response_format: PERSON_FORMAT, n: 2, seed: 11 });
        for (const { text, finish_reason } of choices) {
          assertEquals(finish_reason, "stop");
          assertEquals(validate(JSON.parse(text)), null, text);
        }
        assert(choices[0].text !== choices[1].text, "two samples, one text");
        for (const seed of [1, 2]) {
          const { text, finish } = await stream({ response_format: PERSON_FORMAT, seed });
          assertEquals(finish, "stop");
          assertEquals(validate(JSON.parse(text)), null, text);
        }
        // `echo`: the prompt, then the constrained text.
        const [echoed] = await complete({ response_format: PERSON_FORMAT, seed: 3, echo: true });
        assert(echoed.text.startsWith(PROMPT), echoed.text);
        const json = echoed.text.slice(PROMPT.length);
        assertEquals(validate(JSON.parse(json)), null, json);
      });

      await t.step(`${name}: json_object output is a JSON object`, async () => {
        const validate = validatorFor({ type: "object" });
        // Random weights seldom close a free string soon: this seed happens to finish quickly.
        const [done] = await complete({ response_format: { type: "json_object" }, seed: 40 });
        assertEquals(done.finish_reason, "stop");
        assertEquals(validate(JSON.parse(done.text)), null, done.text);
        const [cut] = await complete({ response_format: { type: "json_object" }, max_tokens: 4 });
        assertEquals(cut.finish_reason, "length");
      });

      await t.step(
        `${name}: text leaves the output free, and may go with guided fields`,
        async () => {
          const body = { seed: 5, max_tokens: 8 };
          const [free] = await complete(body);
          const [text] = await complete({ ...body, response_format: { type: "text" } });
          assertEquals(text.text, free.text);
          const [choice] = await complete({
            response_format: { type: "text" },
            guided_choice: ["yes", "no"],
          });
          assert(["yes", "no"].includes(choice.text), choice.text);
        },
      );

      await t.step(`${name}: a conflict or a bad schema is a 400 naming the field`, async () => {
        const cases: [Body, string][] = [
          [{ response_format: { type: "json_object" }, guided_json: PERSON_SCHEMA }, "guided_json"],
          [
            { response_format: PERSON_FORMAT, structured_outputs: { regex: "a+" } },
            "structured_outputs.regex",
          ],
          [
            {
              response_format: {
                type: "json_schema",
                json_schema: { name: "x", schema: { type: "number", not: { const: 5 } } },
              },
            },
            "response_format.json_schema.schema.not",
          ],
          [{ response_format: { type: "yaml" } }, "response_format.type"],
        ];
        for (const [body, param] of cases) {
          const err = await assertRejects(() => complete(body), OpenAI.BadRequestError);
          assertEquals(err.param, param, err.message);
        }
      });
    }
  } finally {
    await stack.stop();
  }
});
