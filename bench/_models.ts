/**
 * The demo models the benchmarks serve, in a module of their own so that parts which only name
 * them (the gateway bench's roles, the report) do not load the ML runtime with chat.ts or
 * embeddings.ts.
 *
 * @module
 */

/** The chat model of the benchmark (SmolLM2-135M shape, random weights). */
export const CHAT_MODEL = "demo/chat-bench";

/** The embedding model of the benchmark (all-MiniLM-L6-v2 shape, random weights). */
export const EMBED_MODEL = "demo/embed-bench";
