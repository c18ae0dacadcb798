/**
 * `svc llm chat`: chat with a running OpenAI-compatible server, one shot (`--prompt`) or
 * interactively (a REPL on standard input), streaming each reply as it is generated.
 *
 * @module
 */

import { loadConfig } from "../config/env.ts";
import { SvcPorts } from "../config/ports.ts";
import {
  AuthenticationError,
  CancelledError,
  ContextLengthError,
  ServiceError,
  ServiceUnavailableError,
  SvcException,
  ValidationError,
} from "../core/errors.ts";
import { findService, localChatUrls } from "../client/detect_endpoints.ts";
import type { ChatInputMessage, ListedModel } from "../client/types.ts";
import { UnifiedInferenceClient } from "../client/unified_inference_client.ts";
import { writeStderr, writeStdout } from "./_common.ts";
import { checkHttpUrlOption, floatOption, intOption, parseCommandArgs } from "./args.ts";

/** While the server answers 503 (a model loading), a reply is retried for this long. */
const LOAD_WAIT_MS = 60_000;

/** Help text of `svc llm chat`. */
export const LLM_CHAT_HELP = `svc llm chat — chat with a running OpenAI-compatible server

Usage: svc llm chat [--prompt <text>] [options]

  --prompt <text>        ask once, stream the reply to stdout and exit; without it, an
                         interactive chat reads lines from stdin (/reset clears the
                         conversation, /exit or Ctrl-D ends, Ctrl-C stops a reply; a turn
                         the server refuses is reported and left out, and the chat goes on,
                         exiting non-zero at the end)
  --system <text>        system message starting the conversation
  --model <id>           model (default SVC_CHAT_MODEL, else the server's first chat model)
  --base-url <url>       server base URL ending in /v1 (default SVC_CHAT_BASE_URL, else the first
                         that answers, as the client library detects: the gateway of a running
                         'svc llm serve' (its <SVC_HOME>/engines/serve.env), then
                         http://127.0.0.1:${SvcPorts.GATEWAY_DEFAULT}/v1, that serve's engine, SVC_LLM_PORT and the
                         engine ports ${SvcPorts.getLlmPorts().join(", ")})
  --max-tokens <n>       longest reply in tokens
  --temperature <t>      sampling temperature, 0 to 2

Keys: SVC_CHAT_API_KEY is sent as 'Authorization: Bearer <key>'.
Start a server first with 'svc llm serve' (or 'svc llm run --model demo/chat').
Permissions: --allow-net=127.0.0.1 (or the host of --base-url) --allow-env
(--allow-read to pick up a .env file and the state file of 'svc llm serve').`;

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
  const temperature = floatOption(values, "temperature", { min: 0, max: 2 });
  const config = loadConfig();
  const flagUrl = values["base-url"] as string | undefined;
  if (flagUrl !== undefined) {
    checkHttpUrlOption("base-url", flagUrl, "an http(s) URL, e.g. http://127.0.0.1:8000/v1");
  }
  const explicit = flagUrl ?? config.chatBaseUrl;
  const candidates = explicit !== undefined ? withV1(explicit) : await localChatUrls();
  const apiKey = config.chatApiKey;
  const server = await findService(candidates, {
    apiKey,
    keyHint: "SVC_CHAT_API_KEY",
    probeTimeoutMs: explicit !== undefined ? 3000 : 800,
    hint: "start one with 'svc llm serve' (or 'svc llm run --model demo/chat'), or pass " +
      "--base-url / set SVC_CHAT_BASE_URL",
  });
  const model = (values.model as string | undefined) ?? config.chatModel ??
    firstChatModel(server.baseUrl, server.models);
  if (server.models.find((m) => m.id === model)?.randomWeights) {
    writeStderr(`note: ${model} has random weights (a demo model): its replies are noise\n`);
  }
  const system = values.system as string | undefined;
  const session = await ChatSession.open(server.baseUrl, { model, apiKey, maxTokens, temperature });
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

/** The conversation and the client that continues it. */
class ChatSession {
  messages: ChatInputMessage[] = [];
  #client: UnifiedInferenceClient;
  #wait: LoadWait;
  #options: SessionOptions;

  private constructor(client: UnifiedInferenceClient, wait: LoadWait, options: SessionOptions) {
    this.#client = client;
    this.#wait = wait;
    this.#options = options;
  }

  /** A session with the server at `baseUrl` (a base URL that answered). */
  static async open(baseUrl: string, options: SessionOptions): Promise<ChatSession> {
    const wait = new LoadWait();
    const client = await UnifiedInferenceClient.create({
      llmBaseUrl: baseUrl,
      llmModel: options.model,
      // Never used: named so that nothing is probed for embeddings.
      embeddingBaseUrl: baseUrl,
      apiKey: options.apiKey,
      // How many of them is up to the LoadWait.
      maxRetries: 60,
      onRetry: wait.mayRetry,
    });
    return new ChatSession(client, wait, options);
  }

  get model(): string {
    return this.#options.model;
  }

  /** Sends `text`, streams the reply to stdout and keeps both in the conversation. */
  async ask(text: string, signal?: AbortSignal): Promise<void> {
    const turn: ChatInputMessage = { role: "user", content: text };
    const { model, maxTokens, temperature } = this.#options;
    this.#wait.restart();
    let content = "";
    let finishReason: string | null = null;
    let began = false;
    try {
      const deltas = this.#client.chatStream([...this.messages, turn], {
        model,
        maxTokens,
        temperature,
        signal,
      });
      for await (const delta of deltas) {
        began = true;
        if (delta.index !== 0) continue;
        if (delta.content !== "") {
          content += delta.content;
          writeStdout(delta.content);
        }
        if (delta.finishReason) finishReason = delta.finishReason;
      }
    } catch (err) {
      if (signal?.aborted) {
        writeStdout("\n");
        throw new CancelledError("reply stopped (Ctrl-C)", { cause: err });
      }
      // Once the reply has begun, an error (an error event, a broken stream) ends it midway.
      if (began && err instanceof SvcException) {
        if (content !== "") writeStdout("\n");
        throw new ServiceError(`the chat server failed mid-reply: ${err.message}`, { cause: err });
      }
      throw err;
    }
    writeStdout("\n");
    if (finishReason === "length") {
      writeStderr(
        `(reply cut at the token limit${maxTokens ? ` --max-tokens ${maxTokens}` : ""})\n`,
      );
    }
    this.messages.push(turn, { role: "assistant", content });
  }
}

/**
 * The client's retries of one reply: only a loading model (503) is waited for, up to
 * LOAD_WAIT_MS; the first wait is announced. Anything else fails at once.
 */
class LoadWait {
  #until = 0;
  #announced = false;

  /** Starts the wait of a new reply. */
  restart(): void {
    this.#until = Date.now() + LOAD_WAIT_MS;
    this.#announced = false;
  }

  /** The client's `onRetry`. */
  mayRetry = ({ error, delayMs }: { error: SvcException; delayMs: number }): boolean => {
    if (!(error instanceof ServiceUnavailableError)) return false;
    if (Date.now() + delayMs > this.#until) return false;
    if (!this.#announced) writeStderr("(the server is loading the model; waiting)\n");
    this.#announced = true;
    return true;
  };
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
  // The last turn that failed: the exit code says so once the input ends.
  let failed: SvcException | null = null;
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
        if (err instanceof CancelledError) writeStderr("(reply stopped)\n");
        else if (endsChat(err)) throw err;
        else {
          // One turn failed (a prompt over the context, a server restarting): the conversation
          // is kept without it, so the user can go on, /reset, or retry.
          const long = err instanceof ContextLengthError && session.messages.length > system.length;
          writeStderr(
            `svc: ${(err as SvcException).message}${
              long ? " (/reset clears the conversation)" : ""
            }\n`,
          );
          failed = err as SvcException;
        }
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
  return failed?.exitCode ?? 0;
}

/** Whether a failed turn ends the chat: what every later turn would meet too, and bugs. */
function endsChat(err: unknown): boolean {
  return !(err instanceof SvcException) || err instanceof AuthenticationError;
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
  const base = url.trim().replace(/\/+$/, "");
  if (/\/v\d+$/.test(base)) return [base];
  // A bare server address means its /v1 (the client's rule); a path is tried with /v1 first, as
  // OpenAI-compatible servers serve there.
  return /^[a-z][a-z0-9+.-]*:\/\/[^/]+$/i.test(base) ? [`${base}/v1`] : [`${base}/v1`, base];
}

/** The first chat model listed (servers other than Svc list no kinds: the name decides). */
function firstChatModel(baseUrl: string, models: ListedModel[]): string {
  const model = models.find((m) => m.kind === "chat");
  if (!model) {
    throw new ValidationError(
      `the server at ${baseUrl} lists no chat model` +
        (models.length ? ` (only ${models.map((m) => m.id).join(", ")})` : "") +
        ": pass --model <id> or set SVC_CHAT_MODEL",
      { param: "model" },
    );
  }
  return model.id;
}
