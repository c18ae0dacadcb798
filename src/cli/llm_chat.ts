/**
 * `svc llm chat`: chat with a running OpenAI-compatible server, one shot (`--prompt`) or
 * interactively (a REPL on standard input), streaming each reply as it is generated.
 *
 * @module
 */

import { loadConfig } from "../config/env.ts";
import { SvcPorts } from "../config/ports.ts";
import { CancelledError, ValidationError } from "../core/errors.ts";
import { type ChatTurn, findChatServer, pickChatModel, streamChat } from "./_chat_api.ts";
import { writeStderr, writeStdout } from "./_common.ts";
import { intOption, parseCommandArgs, type ParsedArgs } from "./args.ts";

/** Help text of `svc llm chat`. */
export const LLM_CHAT_HELP = `svc llm chat — chat with a running OpenAI-compatible server

Usage: svc llm chat [--prompt <text>] [options]

  --prompt <text>        ask once, stream the reply to stdout and exit; without it, an
                         interactive chat reads lines from stdin (/reset clears the
                         conversation, /exit or Ctrl-D ends, Ctrl-C stops a reply)
  --system <text>        system message starting the conversation
  --model <id>           model (default SVC_CHAT_MODEL, else the server's first chat model)
  --base-url <url>       server base URL ending in /v1 (default SVC_CHAT_BASE_URL, else the first
                         that answers of http://127.0.0.1:${SvcPorts.GATEWAY_DEFAULT}/v1 (gateway) and the engine
                         ports ${SvcPorts.getLlmPorts().join(", ")})
  --max-tokens <n>       longest reply in tokens
  --temperature <t>      sampling temperature, 0 to 2

Keys: SVC_CHAT_API_KEY is sent as 'Authorization: Bearer <key>'.
Start a server first with 'svc llm serve' (or 'svc llm run --model demo/chat').
Permissions: --allow-net=127.0.0.1 (or the host of --base-url) --allow-env
(--allow-read to pick up a .env file).`;

/** Runs `svc llm chat`; returns the exit code. */
export async function llmChat(args: string[]): Promise<number> {
  const { values } = parseCommandArgs(args, "svc llm chat", {
    model: { type: "string" },
    "base-url": { type: "string" },
    prompt: { type: "string" },
    system: { type: "string" },
    "max-tokens": { type: "string" },
    temperature: { type: "string" },
  });
  if (values.help) {
    console.log(LLM_CHAT_HELP);
    return 0;
  }
  const maxTokens = intOption(values, "max-tokens", { min: 1, max: 1_000_000 });
  const temperature = floatOption(values, "temperature", 0, 2);
  const config = loadConfig();
  const explicit = (values["base-url"] as string | undefined) ?? config.chatBaseUrl;
  const candidates = explicit !== undefined ? withV1(explicit) : [
    SvcPorts.GATEWAY_DEFAULT,
    ...SvcPorts.getLlmPorts(),
  ].map((port) => `http://127.0.0.1:${port}/v1`);
  const apiKey = config.chatApiKey;
  const server = await findChatServer(candidates, {
    apiKey,
    timeoutMs: explicit !== undefined ? 3000 : 800,
  });
  const model = (values.model as string | undefined) ?? config.chatModel ??
    pickChatModel(server).id;
  const listed = server.models.find((m) => m.id === model);
  if (listed?.random_weights) {
    writeStderr(`note: ${model} has random weights (a demo model): its replies are noise\n`);
  }
  const system = values.system as string | undefined;
  const session = new ChatSession(server.baseUrl, { model, apiKey, maxTokens, temperature });
  if (system) session.messages.push({ role: "system", content: system });

  const prompt = values.prompt as string | undefined;
  if (prompt !== undefined) {
    if (prompt.trim() === "") {
      throw new ValidationError("--prompt is empty: give the text to send", { param: "prompt" });
    }
    await session.ask(prompt);
    return 0;
  }
  return await repl(session, server.baseUrl);
}

interface SessionOptions {
  model: string;
  apiKey?: string;
  maxTokens?: number;
  temperature?: number;
}

/** The conversation and how to continue it. */
class ChatSession {
  messages: ChatTurn[] = [];
  #baseUrl: string;
  #options: SessionOptions;

  constructor(baseUrl: string, options: SessionOptions) {
    this.#baseUrl = baseUrl;
    this.#options = options;
  }

  get model(): string {
    return this.#options.model;
  }

  /** Sends `text`, streams the reply to stdout and keeps both in the conversation. */
  async ask(text: string, signal?: AbortSignal): Promise<void> {
    const turn: ChatTurn = { role: "user", content: text };
    let reply;
    try {
      reply = await streamChat(this.#baseUrl, [...this.messages, turn], {
        ...this.#options,
        signal,
        onDelta: writeStdout,
        onWaiting: () => writeStderr("(the server is loading the model; waiting)\n"),
      });
    } catch (err) {
      if (signal?.aborted) {
        writeStdout("\n");
        throw new CancelledError("reply stopped (Ctrl-C)", { cause: err });
      }
      throw err;
    }
    writeStdout("\n");
    if (reply.finishReason === "length") {
      writeStderr(
        `(reply cut at the token limit${
          this.#options.maxTokens ? ` --max-tokens ${this.#options.maxTokens}` : ""
        })\n`,
      );
    }
    this.messages.push(turn, { role: "assistant", content: reply.content });
  }
}

async function repl(session: ChatSession, baseUrl: string): Promise<number> {
  const interactive = Deno.stdin.isTerminal();
  const system = session.messages.filter((m) => m.role === "system");
  if (interactive) {
    writeStderr(
      `chatting with ${session.model} at ${baseUrl} — /reset clears, /exit or Ctrl-D ends\n`,
    );
  }
  let current: AbortController | null = null;
  let quit: () => void = () => {};
  const quitting = new Promise<null>((resolve) => (quit = () => resolve(null)));
  // Ctrl-C stops a reply in progress; at the prompt it ends the chat.
  const onSigint = () => current ? current.abort() : quit();
  const signals = Deno.build.os === "windows" ? [] : ["SIGINT" as const];
  signals.forEach((s) => Deno.addSignalListener(s, onSigint));
  const reader = Deno.stdin.readable.pipeThrough(new TextDecoderStream()).getReader();
  const lines = readLines(reader);
  try {
    while (true) {
      if (interactive) writeStdout("> ");
      const next = await Promise.race([lines.next(), quitting]);
      if (next === null || next.done) break;
      const line = next.value.trim();
      if (line === "") continue;
      if (line === "/exit" || line === "/quit") break;
      if (line === "/reset") {
        session.messages = [...system];
        writeStderr("(conversation cleared)\n");
        continue;
      }
      current = new AbortController();
      try {
        await session.ask(line, current.signal);
      } catch (err) {
        if (!(err instanceof CancelledError)) throw err;
        writeStderr("(reply stopped)\n");
      } finally {
        current = null;
      }
    }
  } finally {
    signals.forEach((s) => Deno.removeSignalListener(s, onSigint));
    // Cancelling the reader (not the generator, which may be mid-read) ends a pending read.
    await reader.cancel().catch(() => {});
  }
  if (interactive) writeStdout("\n");
  return 0;
}

/** Lines read from `reader` (without their line endings). */
async function* readLines(reader: ReadableStreamDefaultReader<string>): AsyncGenerator<string> {
  let buffer = "";
  while (true) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    let newline: number;
    while ((newline = buffer.indexOf("\n")) >= 0) {
      yield buffer.slice(0, newline).replace(/\r$/, "");
      buffer = buffer.slice(newline + 1);
    }
  }
  if (buffer !== "") yield buffer;
}

function withV1(url: string): string[] {
  const base = url.replace(/\/+$/, "");
  // A bare server address is tried with /v1 first, as OpenAI-compatible servers serve there.
  return /\/v\d+$/.test(base) ? [base] : [`${base}/v1`, base];
}

function floatOption(
  values: ParsedArgs["values"],
  name: string,
  min: number,
  max: number,
): number | undefined {
  const raw = values[name];
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (raw === "" || !Number.isFinite(n) || n < min || n > max) {
    throw new ValidationError(`--${name} is '${raw}': expected a number from ${min} to ${max}`, {
      param: name,
    });
  }
  return n;
}
