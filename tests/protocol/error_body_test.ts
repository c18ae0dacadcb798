import {
  AuthenticationError,
  CancelledError,
  ConfigurationError,
  ConflictError,
  ContextLengthError,
  MethodNotAllowedError,
  NotFoundError,
  PayloadTooLargeError,
  PermissionDeniedError,
  RateLimitError,
  RequestTimeoutError,
  ServiceError,
  ServiceUnavailableError,
  SvcException,
  UnsupportedMediaTypeError,
  ValidationError,
} from "../../src/core/errors.ts";
import { ERROR_TABLE } from "../../src/core/errors.ts";
import { errorBody, INTERNAL_ERROR_MESSAGE, toWireError } from "../../src/protocol/error_body.ts";
import { assert, assertEquals } from "../_assert.ts";

Deno.test("toWireError() maps every error class to its status and OpenAI type", () => {
  const cases: [Error, number, string, string][] = [
    [new ValidationError("v", { param: "n" }), 400, "invalid_request_error", "invalid_value"],
    [new ContextLengthError("c"), 400, "invalid_request_error", "context_length_exceeded"],
    [new AuthenticationError("a"), 401, "authentication_error", "invalid_api_key"],
    [
      new NotFoundError("n", { code: "model_not_found" }),
      404,
      "not_found_error",
      "model_not_found",
    ],
    [new MethodNotAllowedError("m"), 405, "invalid_request_error", "method_not_allowed"],
    [new PermissionDeniedError("d"), 403, "permission_error", "permission_denied"],
    [new ConflictError("c"), 409, "conflict_error", "conflict"],
    [new PayloadTooLargeError("p"), 413, "invalid_request_error", "payload_too_large"],
    [new RequestTimeoutError("t"), 408, "invalid_request_error", "request_timeout"],
    [new UnsupportedMediaTypeError("u"), 415, "invalid_request_error", "unsupported_media_type"],
    [new RateLimitError("r"), 429, "rate_limit_error", "rate_limit_exceeded"],
    [new CancelledError(), 499, "cancelled_error", "cancelled"],
    [new ConfigurationError("c"), 500, "server_error", "configuration_error"],
    [new ServiceError("s"), 502, "server_error", "service_error"],
    [new ServiceUnavailableError("s"), 503, "service_unavailable_error", "service_unavailable"],
    [new SvcException("x"), 500, "server_error", "internal_error"],
  ];
  for (const [err, status, type, code] of cases) {
    const wire = toWireError(err);
    assertEquals(wire.status, status, err.name);
    assertEquals(wire.body.error.type, type, err.name);
    assertEquals(wire.body.error.code, code, err.name);
    assertEquals(wire.body.error.message, err.message);
    assertEquals(wire.unexpected, false);
    // An error carries its row's status.
    assertEquals((err as SvcException).status, status, err.name);
  }
  assertEquals(
    toWireError(new ValidationError("v", { param: "messages.0.role" })).body.error.param,
    "messages.0.role",
  );
  assertEquals(ERROR_TABLE.length, cases.length);
});

Deno.test("toWireError() adds Retry-After seconds for 429 and 503", () => {
  assertEquals(
    toWireError(new RateLimitError("r", { retryAfterSeconds: 2.2 })).retryAfterSeconds,
    3,
  );
  assertEquals(toWireError(new ServiceUnavailableError("s")).retryAfterSeconds, 1);
  assertEquals(toWireError(new ValidationError("v")).retryAfterSeconds, undefined);
});

Deno.test("toWireError() hides the message of errors that are not ours", () => {
  const wire = toWireError(new TypeError("secret internal detail"), { requestId: "r-1" });
  assertEquals(wire.status, 500);
  assert(wire.unexpected);
  assertEquals(wire.body.error.message, `${INTERNAL_ERROR_MESSAGE} (request id r-1)`);
  assertEquals(wire.body.error.type, "server_error");
  assertEquals(toWireError("a string").status, 500);
  assertEquals(toWireError(undefined).status, 500);
});

Deno.test("errorBody() fills param and code with null when absent", () => {
  assertEquals(errorBody("m", { type: "t" }), {
    error: { message: "m", type: "t", param: null, code: null },
  });
});
