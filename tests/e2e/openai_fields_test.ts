// Issue 22, item 8: the fields OpenAI's Chat Completions API and vLLM's extras define are
// implemented or accepted, against the engine and through the gateway, with the `openai` SDK. The
// demo model has random weights, so behaviour is pinned with logit_bias, whose effect is exact.
import OpenAI from "openai";
import { assert, assertEquals, assertNotEquals } from "../_assert.ts";
import { setupLogger } from "../../src/core/logging.ts";
import { demoFolder } from "../_helpers/demo_engines.ts";
import { setUpTransformers } from "../engine/generated_models/_fixtures.ts";
import { structuredStack } from "./_structured_stack.ts";

setupLogger("error");

const MODEL = "demo/chat";
const EOS = 4072; // <|im_end|>, the demo model's end of turn
const ASK = [{ role: "user" as const, content: "Say something." }];
// Fields the SDK's types do not know (vLLM's extras, newer OpenAI fields) go in the body as-is.
type Extra = Record<string, unknown>;

/** A token whose text is one plain word, and that text. */
async function plainToken(): Promise<{ id: number; text: string }> {
  const tokenizer = await setUpTransformers().AutoTokenizer.from_pretrained(
    await demoFolder("demo/chat"),
  );
  for (let id = 300; id < 4000; id++) {
    const text = tokenizer.decode([id]);
    if (/^[a-z]{3,}$/.test(text)) return { id, text };
  }
  throw new Error("no plain token in the demo vocabulary");
}

Deno.test("openai SDK: OpenAI's and vLLM's request fields work or are accepted", async (t) => {
  const stack = await structuredStack();
  const word = await plainToken();
  try {
    for (const { name, baseUrl } of stack.targets) {
      const client = new OpenAI({ baseURL: baseUrl, apiKey: "unused", maxRetries: 0 });
      const chat = (body: Extra) =>
        client.chat.completions.create({
          model: MODEL,
          messages: ASK,
          temperature: 0,
          max_tokens: 6,
          ...body,
        } as OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming);

      await t.step(`${name}: fields with nothing to do here are accepted`, async () => {
        const plain = await chat({});
        const accepted = await chat({
          store: true,
          metadata: { team: "search" },
          service_tier: "auto",
          prompt_cache_key: "user-7",
          safety_identifier: "hash-7",
          user: "u7",
          prediction: { type: "content", content: "hello" },
          verbosity: "low",
          reasoning_effort: "low",
          modalities: ["text"],
          priority: 1,
          request_id: "r-1",
          spaces_between_special_tokens: true,
        });
        assertEquals(accepted.choices[0].message.content, plain.choices[0].message.content);
        assertEquals(accepted.service_tier, "default");
      });

      await t.step(`${name}: an unknown field and audio output are 400s naming them`, async () => {
        for (const [field, value] of [["frobnicate", 1], ["audio", { voice: "x" }]] as const) {
          const err = await chat({ [field]: value }).catch((e) => e);
          assert(err instanceof OpenAI.BadRequestError, String(err));
          assertEquals((err.error as { param: string }).param, field);
        }
      });

      await t.step(`${name}: logit_bias forces and bans tokens`, async () => {
        const forced = await chat({ logit_bias: { [word.id]: 100 } });
        assertEquals(forced.choices[0].message.content, word.text.repeat(6));
        const first = (await chat({ max_tokens: 1, logprobs: true })).choices[0];
        const firstId = first.logprobs!.content![0].token;
        const banned = await chat({ max_tokens: 1, logprobs: true, logit_bias: {} });
        assertEquals(banned.choices[0].logprobs!.content![0].token, firstId, "an empty bias");
        const ids = await tokenIdsOf(baseUrl, first.message.content!);
        if (ids.length === 1) {
          const other = await chat({ max_tokens: 1, logit_bias: { [ids[0]]: -100 } });
          assertNotEquals(other.choices[0].message.content, first.message.content);
        }
        const err = await chat({ logit_bias: { "999999": 1 } }).catch((e) => e);
        assert(err instanceof OpenAI.BadRequestError);
        assertEquals((err.error as { param: string }).param, "logit_bias");
      });

      await t.step(`${name}: ignore_eos, min_tokens and stop_token_ids`, async () => {
        const eos = { logit_bias: { [EOS]: 100 }, max_tokens: 12 };
        const stops = await chat(eos);
        assertEquals([stops.usage!.completion_tokens, stops.choices[0].finish_reason], [1, "stop"]);
        const ignoring = await chat({ ...eos, ignore_eos: true });
        assertEquals(ignoring.usage!.completion_tokens, 12);
        assertEquals(ignoring.choices[0].finish_reason, "length");
        const late = await chat({ ...eos, min_tokens: 5 });
        assertEquals([late.usage!.completion_tokens, late.choices[0].finish_reason], [6, "stop"]);
        const byId = await chat({ logit_bias: { [word.id]: 100 }, stop_token_ids: [word.id] });
        assertEquals(byId.choices[0].message.content, "");
        assertEquals([byId.usage!.completion_tokens, byId.choices[0].finish_reason], [1, "stop"]);
        // Its text is written with include_stop_str_in_output, as vLLM does.
        const written = await chat({
          logit_bias: { [word.id]: 100 },
          stop_token_ids: [word.id],
          include_stop_str_in_output: true,
        });
        assertEquals(written.choices[0].message.content, word.text);
        assertEquals(written.usage!.completion_tokens, 1);
      });

      await t.step(`${name}: skip_special_tokens and include_stop_str_in_output`, async () => {
        const eos = { logit_bias: { [EOS]: 100 }, ignore_eos: true, max_tokens: 2 };
        assertEquals((await chat(eos)).choices[0].message.content, "");
        const raw = await chat({ ...eos, skip_special_tokens: false });
        assertEquals(raw.choices[0].message.content, "<|im_end|><|im_end|>");
        const forced = { logit_bias: { [word.id]: 100 }, stop: [word.text + word.text] };
        assertEquals((await chat(forced)).choices[0].message.content, "");
        const kept = await chat({ ...forced, include_stop_str_in_output: true });
        assertEquals(kept.choices[0].message.content, word.text + word.text);
      });

      await t.step(`${name}: min_p 1 keeps only the most likely token (greedy)`, async () => {
        const greedy = await chat({ max_tokens: 8 });
        const sampled = await chat({ temperature: 1, seed: 3, min_p: 1, max_tokens: 8 });
        assertEquals(sampled.choices[0].message.content, greedy.choices[0].message.content);
      });

      await t.step(`${name}: continue_final_message, add_generation_prompt and echo`, async () => {
        const started = [...ASK, { role: "assistant" as const, content: "Well, I" }];
        const open = await chat({
          messages: started,
          continue_final_message: true,
          add_generation_prompt: false,
          echo: true,
          max_tokens: 4,
        });
        assert(open.choices[0].message.content!.startsWith("Well, I"));
        const closed = await chat({ messages: started, max_tokens: 4 });
        // The open prompt stops after "Well, I"; the closed one adds the end of turn and a new
        // assistant opening.
        assert(open.usage!.prompt_tokens < closed.usage!.prompt_tokens);
        // continue_final_message implies no generation prompt; asking for both is a 400.
        const alone = await chat({ messages: started, continue_final_message: true });
        assertEquals(alone.usage!.prompt_tokens, open.usage!.prompt_tokens);
        const both = await chat({
          messages: started,
          continue_final_message: true,
          add_generation_prompt: true,
        }).catch((e) => e);
        assert(both instanceof OpenAI.BadRequestError, String(both));
      });

      await t.step(`${name}: the deprecated functions come back as tool calls`, async () => {
        const completion = await chat({
          functions: [{
            name: "get_time",
            parameters: {
              type: "object",
              properties: { zone: { type: "string", maxLength: 6 } },
              required: ["zone"],
              additionalProperties: false,
            },
          }],
          function_call: { name: "get_time" },
          max_tokens: 60,
        });
        const call = completion.choices[0].message.tool_calls![0] as {
          function: { name: string; arguments: string };
        };
        assertEquals(call.function.name, "get_time");
        assertEquals(typeof JSON.parse(call.function.arguments).zone, "string");
        // Their history (an assistant function_call, a function result) is the tool round trip
        // it stands for: the same prompt, token for token.
        const history = (legacy: boolean) => [
          { role: "user", content: "Time in Paris?" },
          legacy
            ? {
              role: "assistant",
              content: null,
              function_call: { name: "get_time", arguments: '{"zone":"CET"}' },
            }
            : {
              role: "assistant",
              content: null,
              tool_calls: [{
                id: "call_fn_1",
                type: "function",
                function: { name: "get_time", arguments: '{"zone":"CET"}' },
              }],
            },
          legacy
            ? { role: "function", name: "get_time", content: "12:00" }
            : { role: "tool", name: "get_time", tool_call_id: "call_fn_1", content: "12:00" },
        ];
        const [legacy, tools] = await Promise.all([true, false].map((l) =>
          chat({
            messages: history(l) as OpenAI.Chat.Completions.ChatCompletionMessageParam[],
            max_tokens: 1,
          })
        ));
        assertEquals(legacy.usage!.prompt_tokens, tools.usage!.prompt_tokens);
        const bare = await chat({
          messages: [{ role: "user", content: "Time in Paris?" }],
          max_tokens: 1,
        });
        // The call and its result are in the prompt (the demo template writes both).
        assert(legacy.usage!.prompt_tokens > bare.usage!.prompt_tokens + 20);
      });

      await t.step(`${name}: legacy completions echo the prompt, streamed or not`, async () => {
        const body = {
          model: MODEL,
          prompt: ["Once", "Twice"],
          max_tokens: 3,
          temperature: 0,
          echo: true,
        };
        const whole = await client.completions.create(body);
        const plain = await client.completions.create({ ...body, echo: false });
        for (const choice of whole.choices) {
          const prompt = body.prompt[choice.index];
          assertEquals(choice.text, prompt + plain.choices[choice.index].text);
        }
        const texts = ["", ""];
        for await (const chunk of await client.completions.create({ ...body, stream: true })) {
          for (const c of chunk.choices) texts[c.index] += c.text;
        }
        assertEquals(texts, whole.choices.map((c) => c.text));
        assert(texts[1].startsWith("Twice"));
      });
    }
  } finally {
    await stack.stop();
  }
});

async function tokenIdsOf(baseUrl: string, text: string): Promise<number[]> {
  const res = await fetch(`${baseUrl.replace(/\/v1$/, "")}/tokenize`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: MODEL, prompt: text, add_special_tokens: false }),
  });
  return (await res.json()).tokens;
}
