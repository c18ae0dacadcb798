/**
 * Prefix affinity: when several engines serve a model, send prompts that start alike to the same
 * engine, whose prefix cache most likely holds their start (a conversation's earlier turns, a
 * system prompt many users share). The key is the head of the prompt as text; the engine is the
 * rendezvous winner for it among the instances with a free slot, unless that one is busier than
 * the least loaded by more than {@link AFFINITY_SLACK}: then the policy's own choice stands.
 * Affinity only ever changes where a request runs, never its answer.
 *
 * Only the first {@link PREFIX_KEY_CHARS} characters count: a conversation keeps its key from
 * the turn it grows past them. A prompt shorter than {@link MIN_PREFIX_KEY_CHARS} has no key: it
 * costs little to prefill anywhere, so load alone decides.
 *
 * @module
 */

import type { Backend } from "./backend.ts";
import { rendezvousScore } from "./routing.ts";

/** Characters of the prompt's text that make its key (~250 tokens). */
export const PREFIX_KEY_CHARS = 1024;

/** Prompts with less text than this (~64 tokens) go where load says. */
export const MIN_PREFIX_KEY_CHARS = 256;

/** How much busier (share of `maxConcurrency`) the affine instance may be than the least loaded. */
export const AFFINITY_SLACK = 0.25;

/**
 * The affinity key of a chat, completion or Responses request body: the start of its prompt text
 * (message roles and text in order); undefined when it has less than
 * {@link MIN_PREFIX_KEY_CHARS} characters of it.
 *
 * @example
 * ```ts
 * import { prefixAffinityKey } from "./prefix_affinity.ts";
 * const system = "You are a support agent for Example Inc. ".repeat(10);
 * prefixAffinityKey({ messages: [{ role: "system", content: system }] })?.length; // 418
 * ```
 */
export function prefixAffinityKey(body: Readonly<Record<string, unknown>>): string | undefined {
  let head = "";
  const add = (text: string) => {
    if (head.length < PREFIX_KEY_CHARS) head += text;
  };
  if (typeof body.instructions === "string") add(`instructions\u0000${body.instructions}\u0000`);
  const messages = Array.isArray(body.messages)
    ? body.messages
    : Array.isArray(body.input)
    ? body.input
    : undefined;
  if (messages !== undefined) {
    for (const message of messages) {
      if (head.length >= PREFIX_KEY_CHARS) break;
      if (typeof message !== "object" || message === null) continue;
      const { role, content } = message as { role?: unknown; content?: unknown };
      add(`${typeof role === "string" ? role : ""}\u0000${textOf(content)}\u0000`);
    }
  } else if (typeof body.input === "string") {
    add(body.input);
  } else if (body.prompt !== undefined) {
    const first = Array.isArray(body.prompt) && typeof body.prompt[0] !== "number"
      ? body.prompt[0]
      : body.prompt;
    add(typeof first === "string" ? first : Array.isArray(first) ? first.join(",") : "");
  }
  return head.length < MIN_PREFIX_KEY_CHARS ? undefined : head.slice(0, PREFIX_KEY_CHARS);
}

/**
 * The instance that most likely holds the cache of `key`, when it is within
 * {@link AFFINITY_SLACK} of the least loaded of `candidates`; else undefined.
 */
export function affineInstance(candidates: readonly Backend[], key: string): Backend | undefined {
  let home = candidates[0];
  let best = rendezvousScore(key, home);
  let least = home.load;
  for (const b of candidates.slice(1)) {
    const score = rendezvousScore(key, b);
    if (score > best) [home, best] = [b, score];
    least = Math.min(least, b.load);
  }
  return home.load <= least + AFFINITY_SLACK ? home : undefined;
}

// Text of a message's content: a string, or the text of its parts.
function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((part) =>
    typeof part === "object" && part !== null && typeof part.text === "string" ? part.text : ""
  ).join("");
}
