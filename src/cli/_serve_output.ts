/**
 * What `svc llm serve` prints: to the console, or to its log file when detached; and the
 * endpoints once everything is ready.
 *
 * @module
 */
import { connectHost } from "../gateway/engines/engine_command.ts";
import type { EngineView } from "../gateway/engines/engine_types.ts";

/** Prints to the console, or to the log file when detached (no terminal to print to). */
export class ServeOutput {
  #file: Deno.FsFile | null = null;
  #encoder = new TextEncoder();

  constructor(logFile: string | undefined) {
    if (logFile) this.#file = Deno.openSync(logFile, { append: true, create: true });
  }

  say(line: string): void {
    if (this.#file) this.line(line);
    else console.log(line);
  }

  line(line: string): void {
    if (this.#file) this.#file.writeSync(this.#encoder.encode(line + "\n"));
    else console.error(line);
  }

  close(): void {
    this.#file?.close();
    this.#file = null;
  }
}

/** The lines that say where everything runs. */
export function printEndpoints(
  out: ServeOutput,
  gatewayUrl: string,
  chat: EngineView,
  emb: EngineView | undefined,
  statePath: string,
): void {
  const about = (v: EngineView) =>
    (v.dtype ? ` (${v.dtype})` : "") + (v.randomWeights ? " — RANDOM weights (demo model)" : "") +
    // No model named and the default one could not be loaded: say which flag names one.
    (v.randomWeights && v.model === null
      ? `; name a real model with ${v.kind === "embedding" ? "--embedding-model" : "--model"}`
      : "");
  const served = emb ? emb.models.length > 1 ? "embeddings, rerank, " : "embeddings, " : "";
  out.say(
    `svc: gateway   ${gatewayUrl}  (chat, completions, ${served}tokenize, models; management)`,
  );
  out.say(`svc: chat      ${chat.models.join(", ")} at ${chat.baseUrl}${about(chat)}`);
  if (emb) {
    const where = emb.placement === "gateway" ? "in the gateway's process" : `at ${emb.baseUrl}`;
    out.say(`svc: embedding ${emb.models.join(", ")} ${where}${about(emb)}`);
  }
  out.say(`svc: browser   ${gatewayUrl.replace(/\/v1$/, "/")}  (playground and dashboard)`);
  out.say(`svc: state     ${statePath} — Ctrl-C or 'svc llm stop' stops everything`);
}

/** A base URL for clients of a server bound to `host`. */
export function urlOf(host: string, port: number): string {
  const h = connectHost(host);
  return `http://${h.includes(":") ? `[${h}]` : h}:${port}/v1`;
}
