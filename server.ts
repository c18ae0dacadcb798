/**
 * Starts the Svc servers; the same as `svc llm serve`.
 *
 * @module
 */
export {};
