/**
 * What the gateway reads of a request body before forwarding it: the model it routes on and
 * whether to relay a stream. Every other field is the backend's to judge, so the gateway never
 * refuses what a backend accepts (vLLM's larger `n`, an image part, a field of a newer API); the
 * backend's own 400 comes back through.
 *
 * @module
 */
import { ValidationError } from "../core/errors.ts";

/**
 * Checks the fields the gateway itself uses; throws a `ValidationError` naming the bad one.
 *
 * @example
 * ```ts
 * import { readEnvelope } from "./request_envelope.ts";
 * readEnvelope({ model: "m", messages: [], anything: 1 }); // { model: "m" }
 * ```
 */
export function readEnvelope(body: unknown): { model: string } {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new ValidationError("The request body must be a JSON object.", { code: "invalid_type" });
  }
  const { model, stream } = body as Record<string, unknown>;
  if (model === undefined || model === null) {
    throw new ValidationError("Missing required parameter: 'model'.", {
      param: "model",
      code: "missing_required_parameter",
    });
  }
  if (typeof model !== "string" || model === "") {
    throw new ValidationError("Invalid value for 'model': expected a non-empty string.", {
      param: "model",
      code: "invalid_type",
    });
  }
  if (stream !== undefined && stream !== null && typeof stream !== "boolean") {
    throw new ValidationError("Invalid value for 'stream': expected a boolean.", {
      param: "stream",
      code: "invalid_type",
    });
  }
  return { model };
}
