/**
 * Compatibility for legacy LLM code: {@link LLMClientAdapter} and {@link createLlmClientCompat}
 * wrap an object with `generate(prompt)` and/or `chat(messages)`, or a plain function
 * `(prompt) => text`, into {@link LlmClientLike}: both methods, both returning the reply text.
 *
 * The full client (UnifiedInferenceClient) lives in src/client; this file only needs the small
 * interface below, so the embedding library does not depend on it.
 *
 * @module
 */

import { ValidationError } from "../core/errors.ts";

/** A chat message as legacy code passes it. */
export interface CompatChatMessage {
  /** `system`, `user`, `assistant`, … */
  role: string;
  /** Message text. */
  content: string;
}

/** Per-call options passed through to the legacy implementation untouched. */
export type CompatCallOptions = Record<string, unknown>;

/** The minimal LLM client shape: chat and generate, each resolving to the reply text. */
export interface LlmClientLike {
  /** Sends a conversation; resolves to the assistant's reply text. */
  chat(messages: CompatChatMessage[], options?: CompatCallOptions): Promise<string>;
  /** Completes one prompt; resolves to the generated text. */
  generate(prompt: string, options?: CompatCallOptions): Promise<string>;
}

/** A legacy `generate`/`chat` method: any input, any of the reply shapes {@link replyText} reads. */
// deno-lint-ignore no-explicit-any
export type LegacyMethod = (input: any, options?: CompatCallOptions) => unknown;

/** What {@link LLMClientAdapter} wraps. */
export type LegacyLlm =
  | ((prompt: string, options?: CompatCallOptions) => unknown)
  | { generate?: LegacyMethod; chat?: LegacyMethod };

/**
 * The reply text of what a legacy call returned: a string, an OpenAI chat or completion response
 * (`choices[0].message.content` / `choices[0].text`), `{message: {content}}`, `{content}` or
 * `{text}`. Anything else is a `ValidationError`.
 */
export function replyText(value: unknown): string {
  if (typeof value === "string") return value;
  // deno-lint-ignore no-explicit-any
  const v = value as any;
  const candidates = [
    v?.choices?.[0]?.message?.content,
    v?.choices?.[0]?.text,
    v?.message?.content,
    v?.content,
    v?.text,
  ];
  const found = candidates.find((c) => typeof c === "string");
  if (found === undefined) {
    throw new ValidationError(
      `the legacy LLM client returned ${JSON.stringify(value)?.slice(0, 120)}; expected a ` +
        "string or a chat/completion response",
    );
  }
  return found;
}

/** Renders messages as one prompt for a generate-only client: `role: content` lines. */
export function renderMessages(messages: CompatChatMessage[]): string {
  return `${messages.map((m) => `${m.role}: ${m.content}`).join("\n")}\nassistant:`;
}

/**
 * Adapts a legacy LLM implementation. With only `generate` (or a function), `chat` renders the
 * messages as `role: content` lines ending in `assistant:`; with only `chat`, `generate` sends
 * the prompt as one user message.
 *
 * @example
 * ```ts
 * import { LLMClientAdapter } from "@svc/cli";
 * const client = new LLMClientAdapter((prompt: string) => `echo: ${prompt}`);
 * console.log(await client.generate("hi")); // "echo: hi"
 * console.log(await client.chat([{ role: "user", content: "hi" }])); // "echo: user: hi\nassistant:"
 * ```
 */
export class LLMClientAdapter implements LlmClientLike {
  readonly #generate: LegacyMethod | null;
  readonly #chat: LegacyMethod | null;

  /** Wraps `impl`; a `ValidationError` when it has neither `generate` nor `chat`. */
  constructor(impl: LegacyLlm) {
    if (typeof impl === "function") {
      this.#generate = impl;
      this.#chat = null;
    } else {
      const g = impl?.generate;
      const c = impl?.chat;
      this.#generate = typeof g === "function" ? g.bind(impl) : null;
      this.#chat = typeof c === "function" ? c.bind(impl) : null;
    }
    if (this.#generate === null && this.#chat === null) {
      throw new ValidationError(
        "LLMClientAdapter needs a function (prompt) => text or an object with generate(prompt) " +
          "or chat(messages)",
        { param: "impl" },
      );
    }
  }

  /** Legacy `chat` when there is one, else `generate` on the rendered messages. */
  async chat(messages: CompatChatMessage[], options?: CompatCallOptions): Promise<string> {
    if (!Array.isArray(messages)) {
      throw new ValidationError("chat() takes a list of {role, content} messages", {
        param: "messages",
      });
    }
    if (this.#chat !== null) return replyText(await this.#chat(messages, options));
    return replyText(await this.#generate!(renderMessages(messages), options));
  }

  /** Legacy `generate` when there is one, else `chat` with one user message. */
  async generate(prompt: string, options?: CompatCallOptions): Promise<string> {
    if (typeof prompt !== "string") {
      throw new ValidationError("generate() takes a prompt string", { param: "prompt" });
    }
    if (this.#generate !== null) return replyText(await this.#generate(prompt, options));
    return replyText(await this.#chat!([{ role: "user", content: prompt }], options));
  }
}

/**
 * Wraps a legacy LLM implementation as {@link LlmClientLike} (an {@link LLMClientAdapter};
 * one is returned as is).
 *
 * @example
 * ```ts
 * import { createLlmClientCompat } from "@svc/cli";
 * const client = createLlmClientCompat({ chat: async () => ({ choices: [{ message: { content: "ok" } }] }) });
 * console.log(await client.generate("ping")); // "ok"
 * ```
 */
export function createLlmClientCompat(impl: LegacyLlm | LLMClientAdapter): LlmClientLike {
  return impl instanceof LLMClientAdapter ? impl : new LLMClientAdapter(impl);
}
