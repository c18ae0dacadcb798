/**
 * Svc: a Deno-native foundation layer for LLM applications — an OpenAI-compatible gateway, an
 * inference engine on transformers.js, an embedding server, a unified client library and a CLI.
 *
 * Imported, this module is the library. Run as the main module it is the `svc` CLI, so
 * `deno run -A jsr:@svc/cli llm serve` works.
 *
 * @example
 * ```ts
 * import { SvcPorts } from "@svc/cli";
 * console.log(SvcPorts.GATEWAY_DEFAULT); // 8000
 * ```
 *
 * @module
 */

export {
  AuthenticationError,
  CancelledError,
  ConfigurationError,
  ConflictError,
  ContextLengthError,
  MethodNotAllowedError,
  NotFoundError,
  PayloadTooLargeError,
  RateLimitError,
  ServiceError,
  ServiceUnavailableError,
  SvcException,
  ValidationError,
} from "./src/core/errors.ts";
export type { RetryableErrorOptions, SvcErrorOptions } from "./src/core/errors.ts";

if (import.meta.main) {
  // Loaded lazily so importing the library never pulls in the CLI and the ML runtime.
  const { main } = await import("./cli.ts");
  Deno.exit(await main(Deno.args));
}
