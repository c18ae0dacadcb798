/**
 * Conversations: what the prefix cache is for. Two workloads on a ~1,500-token system prompt,
 * our engine server (prefix cache at its default) beside llama.cpp's `llama-server` on the same
 * weights (`-np 4`, its prompt cache on, as it is by default), turn by turn, interleaved:
 *
 * - **conversation**: one user, 8 turns; each turn sends the whole conversation again (system
 *   prompt, every earlier question and the server's own earlier answers), as chat apps do.
 * - **shared**: 8 users one after another, each the same system prompt and a question of their own.
 *
 * Both servers get the token ids our chat template makes of the messages (llama.cpp's
 * `/completion` and our `/v1/completions` take ids), greedy, {@link ANSWER_TOKENS} tokens each
 * (llama.cpp with `ignore_eos`). Time to first token is the time to the first streamed token.
 * Each repeat uses a system prompt of its own, so no repeat finds another's cache.
 *
 * Standalone: `deno run -A bench/conversation.ts [--dtype q4] [--repeats 3]`.
 *
 * @module
 */

import * as transformers from "@huggingface/transformers";
import type { BenchContext } from "./_context.ts";
import { ServerProcess } from "./_server_process.ts";
import { median } from "./_stats.ts";
import { makeTexts } from "./_texts.ts";
import { CHAT_MODEL } from "./_models.ts";
import { benchGguf, findLlamaServer, LLAMA_BUILD_HINT, LlamaServer } from "./_llama_server.ts";
import { fetchRetryingClosed, sseData } from "./_sse.ts";
import { materializeDemoModel } from "../src/engine/generated_models/demo_models.ts";
import { DEFAULT_PREFIX_CACHE_BYTES } from "../src/engine/chat/prefix_cache.ts";
import type { LlamaGgufType } from "../fixtures/generated_models/llama_gguf.ts";

/** Words of the system prompt (about one token each). */
export const SYSTEM_WORDS = 1450;
/** Turns of the conversation, and users sharing the system prompt. */
export const TURNS = 8;
/** Words of each user message. */
const QUESTION_WORDS = 40;
/** Tokens of each answer. */
export const ANSWER_TOKENS = 32;
/** llama.cpp's slots, as a user serving a few conversations would run it. */
const LLAMA_SLOTS = 4;

const GGUF_TYPE: Partial<Record<string, LlamaGgufType>> = { q8: "Q8_0", q4: "Q4_0", fp32: "F16" };

type Server = "ours" | "llama";

/** Medians over repeats, per turn (conversation) or per user (shared), in order. */
export interface ConversationSeries {
  ttftMs: number[];
  promptTokens: number[];
  /** Prompt tokens the server reused from its cache (ours: `cached_tokens`; llama.cpp: `cache_n`). */
  cachedTokens: number[];
}

/** What the conversation part measured. */
export interface ConversationResults {
  repeats: number;
  answerTokens: number;
  conversation: Partial<Record<Server, ConversationSeries>>;
  shared: Partial<Record<Server, ConversationSeries>>;
  /** Present when llama.cpp ran. */
  llama?: { binary: string; gguf: string; type: LlamaGgufType; slots: number };
}

interface Turn {
  ttftMs: number;
  promptTokens: number;
  cachedTokens: number;
  text: string;
}

/** Sends prompt ids, streams the answer; the time to its first token. */
type Ask = (ids: number[]) => Promise<Turn>;

/**
 * Runs both workloads against our server and, when a build is found, llama-server.
 *
 * @example
 * ```ts
 * const results = await runConversation(ctx);
 * ```
 */
export async function runConversation(ctx: BenchContext): Promise<ConversationResults> {
  ctx.log(`conversation: starting ${CHAT_MODEL} (prefix cache on)`);
  const ours = await ServerProcess.start({
    target: "engine",
    model: CHAT_MODEL,
    kind: "chat",
    cacheDir: ctx.cacheDir,
    device: ctx.device,
    dtype: ctx.dtype,
    // By name: the default is none on webgpu (prefix_cache.ts), and this part measures the cache.
    scheduler: { prefixCacheBytes: DEFAULT_PREFIX_CACHE_BYTES },
  }, { logFile: ctx.serverLog });
  const asks: Partial<Record<Server, Ask>> = { ours: (ids) => askOurs(ours.baseUrl, ids) };
  let llama: { server: LlamaServer; peer: NonNullable<ConversationResults["llama"]> } | undefined;
  const binary = await findLlamaServer();
  const type = GGUF_TYPE[ctx.dtype];
  if (!binary) ctx.log(`conversation: ${LLAMA_BUILD_HINT}`);
  else if (!type) ctx.log(`conversation: llama.cpp rows skipped: no GGUF matches ${ctx.dtype}`);
  else {
    const gguf = await benchGguf(ctx.cacheDir, CHAT_MODEL, type);
    const server = await LlamaServer.start(binary, gguf, {
      parallel: LLAMA_SLOTS,
      slotContext: 4096,
      logFile: ctx.serverLog,
    });
    llama = { server, peer: { binary, gguf, type, slots: LLAMA_SLOTS } };
    asks.llama = (ids) => askLlama(server.baseUrl, ids);
  }
  const servers = Object.keys(asks) as Server[];
  const folder = await materializeDemoModel(CHAT_MODEL, ctx.cacheDir);
  transformers.env.allowRemoteModels = false;
  const tokenizer = await transformers.AutoTokenizer.from_pretrained(folder);
  const render = (messages: { role: string; content: string }[]) =>
    tokenizer.encode(
      tokenizer.apply_chat_template(messages, {
        tokenize: false,
        add_generation_prompt: true,
      }) as string,
      { add_special_tokens: false },
    );
  const conversation: Record<string, Turn[][]> = {};
  const shared: Record<string, Turn[][]> = {};
  try {
    for (const server of servers) await asks[server]!(render(chat(999, [])).slice(0, 64)); // warm
    for (let r = 0; r < ctx.repeats; r++) {
      // Interleaved: the servers take turns, the first one changing from repeat to repeat.
      const order = r % 2 === 0 ? servers : [...servers].reverse();
      const histories = Object.fromEntries(servers.map((s) => [s, [] as string[]]));
      const turns = Object.fromEntries(servers.map((s) => [s, [] as Turn[]]));
      for (let t = 0; t < TURNS; t++) {
        for (const server of order) {
          const history = histories[server];
          history.push(question(r, t));
          const turn = await asks[server]!(render(chat(2 * r, history)));
          history.push(turn.text);
          turns[server].push(turn);
        }
      }
      for (const s of servers) (conversation[s] ??= []).push(turns[s]);
      const users = Object.fromEntries(servers.map((s) => [s, [] as Turn[]]));
      for (let u = 0; u < TURNS; u++) {
        for (const server of order) {
          users[server].push(await asks[server]!(render(chat(2 * r + 1, [question(r, 100 + u)]))));
        }
      }
      for (const s of servers) (shared[s] ??= []).push(users[s]);
      for (const s of servers) {
        const c = turns[s].map((x) => x.ttftMs.toFixed(0)).join(" ");
        const u = users[s].map((x) => x.ttftMs.toFixed(0)).join(" ");
        ctx.log(`  [${r + 1}/${ctx.repeats}] ${s}: TTFT by turn ${c} ms; by user ${u} ms`);
      }
    }
  } finally {
    await Promise.all([ours.stop(), llama?.server.stop()]);
  }
  const series = (runs: Turn[][]): ConversationSeries => ({
    ttftMs: runs[0].map((_, i) => median(runs.map((run) => run[i].ttftMs))),
    promptTokens: runs[0].map((_, i) => median(runs.map((run) => run[i].promptTokens))),
    cachedTokens: runs[0].map((_, i) => median(runs.map((run) => run[i].cachedTokens))),
  });
  const bySeries = (all: Record<string, Turn[][]>) =>
    Object.fromEntries(Object.entries(all).map(([s, runs]) => [s, series(runs)]));
  return {
    repeats: ctx.repeats,
    answerTokens: ANSWER_TOKENS,
    conversation: bySeries(conversation),
    shared: bySeries(shared),
    ...(llama ? { llama: llama.peer } : {}),
  };
}

/** The messages of a conversation on system prompt `system`: alternating questions and answers. */
function chat(system: number, history: string[]): { role: string; content: string }[] {
  const prompt = makeTexts(1, SYSTEM_WORDS, 5000 + system)[0];
  return [
    { role: "system", content: `You are an assistant. Background: ${prompt}.` },
    ...history.map((content, i) => ({ role: i % 2 === 0 ? "user" : "assistant", content })),
  ];
}

function question(repeat: number, index: number): string {
  return `Question ${index + 1}: ${makeTexts(1, QUESTION_WORDS, 7000 + repeat * 1000 + index)[0]}?`;
}

async function askOurs(baseUrl: string, ids: number[]): Promise<Turn> {
  const start = performance.now();
  const res = await fetch(`${baseUrl}/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      model: CHAT_MODEL,
      prompt: ids,
      max_tokens: ANSWER_TOKENS,
      temperature: 0,
      stream: true,
      stream_options: { include_usage: true },
    }),
  });
  if (!res.ok || !res.body) throw new Error(`request failed: ${res.status} ${await res.text()}`);
  const turn: Turn = { ttftMs: NaN, promptTokens: ids.length, cachedTokens: 0, text: "" };
  for await (const { data, at } of sseData(res.body)) {
    if (data === "[DONE]") continue;
    const chunk = JSON.parse(data);
    if (chunk.error) throw new Error(`stream error: ${JSON.stringify(chunk.error)}`);
    const text = chunk.choices?.[0]?.text;
    if (text) {
      if (Number.isNaN(turn.ttftMs)) turn.ttftMs = at - start;
      turn.text += text;
    }
    if (chunk.usage) turn.cachedTokens = chunk.usage.prompt_tokens_details?.cached_tokens ?? 0;
  }
  return turn;
}

async function askLlama(baseUrl: string, ids: number[]): Promise<Turn> {
  const start = performance.now();
  const res = await fetchRetryingClosed(`${baseUrl}/completion`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      prompt: ids,
      n_predict: ANSWER_TOKENS,
      temperature: 0,
      ignore_eos: true,
      cache_prompt: true,
      stream: true,
      return_tokens: true,
    }),
  });
  if (!res.ok || !res.body) throw new Error(`llama.cpp failed: ${res.status} ${await res.text()}`);
  const turn: Turn = { ttftMs: NaN, promptTokens: ids.length, cachedTokens: 0, text: "" };
  for await (const { data, at } of sseData(res.body)) {
    const chunk = JSON.parse(data);
    if (chunk.error) throw new Error(`llama.cpp stream error: ${JSON.stringify(chunk.error)}`);
    if ((chunk.tokens?.length > 0 || chunk.content) && Number.isNaN(turn.ttftMs)) {
      turn.ttftMs = at - start;
    }
    turn.text += chunk.content ?? "";
    if (chunk.stop) turn.cachedTokens = chunk.timings?.cache_n ?? 0;
  }
  return turn;
}

if (import.meta.main) {
  const { parseArgs } = await import("node:util");
  const { OutputPaths } = await import("../src/config/output_paths.ts");
  const { values } = parseArgs({
    options: {
      dtype: { type: "string", default: "q4" },
      repeats: { type: "string", default: "3" },
    },
  });
  const results = await runConversation({
    cacheDir: OutputPaths.resolve().cache,
    device: "cpu",
    dtype: values.dtype as BenchContext["dtype"],
    quick: false,
    repeats: Number(values.repeats),
    embedSeconds: 0,
    chatSeconds: 0,
    maxTokens: ANSWER_TOKENS,
    httpRequests: 0,
    log: (m) => console.error(m),
  });
  console.log(JSON.stringify(results, null, 2));
}
