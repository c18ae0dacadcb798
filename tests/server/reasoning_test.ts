// Reasoning (`<think>…</think>` → `reasoning_content`) and `chat_template_kwargs`, end to end over
// a loopback socket with the official `openai` client, on the demo chat model (random weights, a
// truncated Qwen3 tokenizer that has `<think>` and `</think>`). Its chat template is Qwen3's, plus
// two test lines: `open_think` ends the generation prompt inside `<think>` (as DeepSeek-R1 and
// newer Qwen3 templates do), and a first assistant message raises a template exception. Random
// weights give no real reasoning, so every answer is checked against the raw completion of the
// same prompt ids (`/v1/completions` never splits), split by the pure splitter.
import OpenAI from "openai";
import { join } from "node:path";
import { createEngine } from "../../src/engine/create_engine.ts";
import type { ChatEngine } from "../../src/engine/chat/chat_engine.ts";
import { splitReasoning } from "../../src/protocol/reasoning.ts";
import { createEngineApp } from "../../src/server/engine_app.ts";
import type { HttpLogger } from "../../src/http/logger.ts";
import { serveApp } from "../../src/http/serve.ts";
import { demoFolder, TEST_MODEL_CACHE } from "../_helpers/demo_engines.ts";
import { FakeEngine } from "../_helpers/fake_engine.ts";
import type {
  GenerationEvent,
  GenerationStream,
  PromptInput,
  ReasoningMarkers,
  SamplingParams,
} from "../../src/core/inference_types.ts";
import { assert, assertEquals, assertRejects } from "../_assert.ts";

const QUIET: HttpLogger = { error: () => {}, warn: () => {} };
const MODEL = "demo/think";
const MESSAGES: OpenAI.ChatCompletionMessageParam[] = [{ role: "user", content: "Why?" }];
const TAGS = { start: "<think>", end: "</think>" };

const RAISE = "{%- if messages[0].role == 'assistant' %}" +
  "{{ raise_exception('Conversations must start with a user message') }}{%- endif %}\n";
const OPEN_THINK = "\n{%- if add_generation_prompt and open_think is defined and open_think %}" +
  "{{- '<think>\\n' }}{%- endif %}";

/** A copy of demo/chat whose template has the two test lines. */
async function thinkingModelFolder(): Promise<string> {
  const source = await demoFolder("demo/chat");
  const dir = await Deno.makeTempDir({ prefix: "svc-think-" });
  for (const name of ["config.json", "generation_config.json", "tokenizer.json"]) {
    await Deno.copyFile(join(source, name), join(dir, name));
  }
  await Deno.mkdir(join(dir, "onnx"));
  for (const name of ["model.onnx", "model_quantized.onnx"]) {
    await Deno.copyFile(join(source, "onnx", name), join(dir, "onnx", name));
  }
  const config = JSON.parse(await Deno.readTextFile(join(source, "tokenizer_config.json")));
  config.chat_template = RAISE + config.chat_template + OPEN_THINK;
  await Deno.writeTextFile(join(dir, "tokenizer_config.json"), JSON.stringify(config));
  return dir;
}

async function withServer(
  fn: (ctx: { client: OpenAI; engine: ChatEngine; url: string }) => Promise<void>,
): Promise<void> {
  const folder = await thinkingModelFolder();
  const engine = await createEngine(folder, {
    id: MODEL,
    device: "cpu",
    cacheDir: TEST_MODEL_CACHE,
  }) as ChatEngine;
  const server = serveApp(createEngineApp({ engines: [engine], logger: QUIET }), {
    hostname: "127.0.0.1",
    port: 0,
    logger: QUIET,
  });
  const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: "none", maxRetries: 0 });
  try {
    await fn({ client, engine, url: server.url });
  } finally {
    await server.shutdown();
    await engine.dispose();
    await Deno.remove(folder, { recursive: true });
  }
}

type Extra = { chat_template_kwargs?: Record<string, unknown> };
type ReasoningMessage = { content: string | null; reasoning_content?: string };

/** The raw greedy completion of exactly the prompt the chat route renders. */
async function rawCompletion(
  client: OpenAI,
  engine: ChatEngine,
  kwargs: Record<string, unknown> | undefined,
  extra: { max_tokens: number; stop?: string },
): Promise<{ text: string; promptTokens: number }> {
  const ids = engine.promptIds({
    messages: [{ role: "user", content: "Why?" }],
    ...(kwargs ? { templateKwargs: kwargs } : {}),
  });
  const raw = await client.completions.create({
    model: MODEL,
    prompt: ids,
    temperature: 0,
    ...extra,
  });
  assertEquals("reasoning_content" in raw.choices[0], false);
  return { text: raw.choices[0].text, promptTokens: ids.length };
}

Deno.test("reasoning: a prompt that opens <think> gives reasoning_content, then content", async () => {
  await withServer(async ({ client, engine }) => {
    const kwargs = { open_think: true };
    for (const max_tokens of [1, 6, 24]) {
      const raw = await rawCompletion(client, engine, kwargs, { max_tokens });
      const expected = splitReasoning(raw.text, { ...TAGS, startsInside: true });
      const chat = await client.chat.completions.create(
        {
          model: MODEL,
          messages: MESSAGES,
          temperature: 0,
          max_tokens,
          chat_template_kwargs: kwargs,
        } as OpenAI.ChatCompletionCreateParamsNonStreaming & Extra,
      );
      const message = chat.choices[0].message as ReasoningMessage;
      assertEquals(typeof message.reasoning_content, "string");
      assertEquals(
        { reasoning: message.reasoning_content, content: message.content },
        expected,
        raw.text,
      );
      assertEquals(chat.usage?.prompt_tokens, raw.promptTokens);
    }
  });
});

Deno.test("reasoning: streamed deltas carry reasoning_content and content, logprobs and stop kept", async () => {
  await withServer(async ({ client, engine }) => {
    const kwargs = { open_think: true };
    const full = await rawCompletion(client, engine, kwargs, { max_tokens: 24 });
    // A stop string taken from the middle of the output cuts it there, reasoning or not.
    const stop = full.text.length >= 8 ? full.text.slice(5, 8) : undefined;
    for (const extra of [{}, stop === undefined ? {} : { stop }]) {
      const raw = await rawCompletion(client, engine, kwargs, { max_tokens: 24, ...extra });
      const stream = await client.chat.completions.create(
        {
          model: MODEL,
          messages: MESSAGES,
          temperature: 0,
          max_tokens: 24,
          logprobs: true,
          stream: true,
          stream_options: { include_usage: true },
          chat_template_kwargs: kwargs,
          ...extra,
        } as OpenAI.ChatCompletionCreateParamsStreaming & Extra,
      );
      let reasoning = "";
      let content = "";
      let tokens = 0;
      let usage;
      for await (const chunk of stream) {
        const delta = chunk.choices[0]?.delta as ReasoningMessage | undefined;
        reasoning += delta?.reasoning_content ?? "";
        content += delta?.content ?? "";
        tokens += chunk.choices[0]?.logprobs?.content?.length ?? 0;
        if (chunk.usage) usage = chunk.usage;
      }
      const expected = splitReasoning(raw.text, { ...TAGS, startsInside: true });
      assertEquals({ reasoning, content }, expected, raw.text);
      assert(usage !== undefined);
      // One logprob per generated token, except an EOS that ended the answer.
      assert(tokens === usage.completion_tokens || tokens === usage.completion_tokens - 1);
    }
  });
});

Deno.test("reasoning: enable_thinking false reaches the Qwen3 template and closes the block", async () => {
  await withServer(async ({ client, engine }) => {
    const on = await rawCompletion(client, engine, undefined, { max_tokens: 8 });
    const off = await rawCompletion(client, engine, { enable_thinking: false }, { max_tokens: 8 });
    // `<think>`, "\n\n", `</think>`, "\n\n": the template's empty think block.
    assertEquals(off.promptTokens, on.promptTokens + 4);
    const chat = await client.chat.completions.create(
      {
        model: MODEL,
        messages: MESSAGES,
        temperature: 0,
        max_tokens: 8,
        chat_template_kwargs: { enable_thinking: false },
      } as OpenAI.ChatCompletionCreateParamsNonStreaming & Extra,
    );
    const message = chat.choices[0].message as ReasoningMessage;
    const expected = splitReasoning(off.text, TAGS);
    assertEquals({ reasoning: message.reasoning_content, content: message.content }, expected);
    assertEquals(chat.usage?.prompt_tokens, off.promptTokens);
  });
});

Deno.test("reasoning: a chat template exception is a 400 invalid_request_error naming it", async () => {
  await withServer(async ({ client }) => {
    const err = await assertRejects(
      () =>
        client.chat.completions.create({
          model: MODEL,
          messages: [{ role: "assistant", content: "hello" }, { role: "user", content: "hi" }],
        }),
      OpenAI.BadRequestError,
    );
    assertEquals(err.status, 400);
    assertEquals(err.type, "invalid_request_error");
    assertEquals(err.param, "messages");
    assert(err.message.includes("Conversations must start with a user message"), err.message);
  });
});

Deno.test("reasoning: chat_template_kwargs must be an object and may not replace messages", async () => {
  await withServer(async ({ url }) => {
    const post = async (kwargs: unknown) => {
      const res = await fetch(`${url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: MODEL, messages: MESSAGES, chat_template_kwargs: kwargs }),
      });
      assertEquals(res.status, 400);
      return (await res.json()).error;
    };
    assertEquals((await post("enable_thinking")).param, "chat_template_kwargs");
    assertEquals((await post([true])).param, "chat_template_kwargs");
    assertEquals((await post({ messages: [] })).param, "chat_template_kwargs.messages");
  });
});

/** An engine that streams fixed pieces of text, with or without reasoning markers. */
class ScriptedEngine extends FakeEngine {
  constructor(readonly pieces: string[], readonly markers?: ReasoningMarkers) {
    super({ id: "scripted" });
  }

  override generate(input: PromptInput, params: SamplingParams): Promise<GenerationStream> {
    this.generateCalls.push({ input, params });
    const pieces = this.pieces;
    return Promise.resolve({
      promptTokens: 3,
      ...(this.markers ? { reasoning: this.markers } : {}),
      async *[Symbol.asyncIterator](): AsyncGenerator<GenerationEvent> {
        for (const text of pieces) yield { type: "delta", text };
        const usage = { promptTokens: 3, completionTokens: pieces.length };
        yield { type: "finish", finishReason: "stop", usage };
      },
    });
  }
}

const PIECES = ["<thi", "nk>\nLet me", " see.\n</th", "ink>\n\nThe answer", " is 4."];

async function withScripted(
  engine: ScriptedEngine,
  fn: (client: OpenAI) => Promise<void>,
): Promise<void> {
  const server = serveApp(createEngineApp({ engines: [engine], logger: QUIET }), {
    hostname: "127.0.0.1",
    port: 0,
    logger: QUIET,
  });
  try {
    await fn(new OpenAI({ baseURL: `${server.url}/v1`, apiKey: "none", maxRetries: 0 }));
  } finally {
    await server.shutdown();
  }
}

async function streamedParts(client: OpenAI) {
  const stream = await client.chat.completions.create({
    model: "scripted",
    messages: MESSAGES,
    stream: true,
  });
  const deltas: ReasoningMessage[] = [];
  for await (const chunk of stream) {
    const delta = chunk.choices[0]?.delta as ReasoningMessage | undefined;
    if (delta && (delta.content || delta.reasoning_content)) deltas.push(delta);
  }
  return deltas;
}

Deno.test("reasoning: think tags split across deltas become reasoning_content (openai SDK)", async () => {
  const markers = { ...TAGS, startsInside: false };
  await withScripted(new ScriptedEngine(PIECES, markers), async (client) => {
    const chat = await client.chat.completions.create({ model: "scripted", messages: MESSAGES });
    const message = chat.choices[0].message as ReasoningMessage;
    assertEquals(message.reasoning_content, "Let me see.");
    assertEquals(message.content, "The answer is 4.");
    const deltas = await streamedParts(client);
    assertEquals(deltas.map((d) => d.reasoning_content ?? "").join(""), "Let me see.");
    assertEquals(deltas.map((d) => d.content ?? "").join(""), "The answer is 4.");
    // Reasoning pieces carry no content; no tag text is ever sent.
    assert(deltas.every((d) => !(d.reasoning_content && "content" in d)));
    assert(deltas.every((d) => !`${d.content}${d.reasoning_content}`.includes("think")));
    // Legacy completions take the raw text, tags and all.
    const raw = await client.completions.create({ model: "scripted", prompt: "Why?" });
    assertEquals(raw.choices[0].text, PIECES.join(""));
  });
});

Deno.test("reasoning: a model without think tokens keeps its text byte for byte", async () => {
  await withScripted(new ScriptedEngine(PIECES), async (client) => {
    const chat = await client.chat.completions.create({ model: "scripted", messages: MESSAGES });
    assertEquals(chat.choices[0].message.content, PIECES.join(""));
    assertEquals("reasoning_content" in chat.choices[0].message, false);
    const deltas = await streamedParts(client);
    assertEquals(deltas.map((d) => d.content).join(""), PIECES.join(""));
    assertEquals(deltas.length, PIECES.length);
  });
});

Deno.test("reasoning: every choice of n is split on its own; kwargs reach the engine", async () => {
  const engine = new ScriptedEngine(PIECES, { ...TAGS, startsInside: false });
  await withScripted(engine, async (client) => {
    const stream = await client.chat.completions.create(
      {
        model: "scripted",
        messages: MESSAGES,
        n: 2,
        stream: true,
        chat_template_kwargs: { enable_thinking: true, depth: [1, { x: null }] },
      } as OpenAI.ChatCompletionCreateParamsStreaming & Extra,
    );
    const reasoning = ["", ""];
    const content = ["", ""];
    for await (const chunk of stream) {
      for (const choice of chunk.choices) {
        const delta = choice.delta as ReasoningMessage;
        reasoning[choice.index] += delta.reasoning_content ?? "";
        content[choice.index] += delta.content ?? "";
      }
    }
    assertEquals(reasoning, ["Let me see.", "Let me see."]);
    assertEquals(content, ["The answer is 4.", "The answer is 4."]);
    assertEquals(engine.generateCalls[0].input, {
      messages: [{ role: "user", content: "Why?" }],
      templateKwargs: { enable_thinking: true, depth: [1, { x: null }] },
    });
  });
});

Deno.test("reasoning: /v1/responses gives a reasoning item before the message", async () => {
  const markers = { ...TAGS, startsInside: false };
  await withScripted(new ScriptedEngine(PIECES, markers), async (client) => {
    const response = await client.responses.create({ model: "scripted", input: "Why?" });
    assertEquals(response.output.map((i) => i.type), ["reasoning", "message"]);
    const reasoning = response.output[0] as OpenAI.Responses.ResponseReasoningItem;
    assertEquals(reasoning.content, [{ type: "reasoning_text", text: "Let me see." }]);
    assertEquals(response.output_text, "The answer is 4.");
    const stream = await client.responses.create({
      model: "scripted",
      input: "Why?",
      stream: true,
    });
    const types: string[] = [];
    let thought = "";
    let said = "";
    for await (const event of stream) {
      if (!types.includes(event.type)) types.push(event.type);
      if (event.type === "response.reasoning_text.delta") thought += event.delta;
      if (event.type === "response.output_text.delta") said += event.delta;
    }
    assertEquals([thought, said], ["Let me see.", "The answer is 4."]);
    assertEquals(types, [
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.reasoning_text.delta",
      "response.reasoning_text.done",
      "response.output_item.done",
      "response.content_part.added",
      "response.output_text.delta",
      "response.output_text.done",
      "response.content_part.done",
      "response.completed",
    ]);
    // A later turn refers to the reasoning item: accepted, and left out of the prompt.
    const next = await client.responses.create({
      model: "scripted",
      input: [{ type: "item_reference", id: reasoning.id }, { role: "user", content: "And?" }],
    });
    assertEquals(next.status, "completed");
  });
});
