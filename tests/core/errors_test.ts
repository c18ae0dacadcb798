import { assert, assertEquals } from "../_assert.ts";
import {
  AuthenticationError,
  CancelledError,
  ConfigurationError,
  ContextLengthError,
  ERROR_TABLE,
  errorMapping,
  errorMappingForStatus,
  isRetryable,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
  ServiceError,
  ServiceUnavailableError,
  SvcException,
  ValidationError,
} from "../../src/core/errors.ts";

Deno.test("SvcException is the base of every error class", () => {
  for (
    const err of [new ConfigurationError("x"), new ValidationError("x"), new ServiceError("x")]
  ) {
    assert(err instanceof SvcException);
    assert(err instanceof Error);
  }
});

Deno.test("errors carry name, code, HTTP status and exit code", () => {
  const err = new ConfigurationError("SVC_LLM_PORT is 'abc'", { param: "SVC_LLM_PORT" });
  assertEquals(err.name, "ConfigurationError");
  assertEquals(err.code, "configuration_error");
  assertEquals(err.exitCode, 78);
  assertEquals(err.param, "SVC_LLM_PORT");
  assertEquals(new ValidationError("bad").status, 400);
  assertEquals(new ServiceError("down").status, 502);
});

Deno.test("ContextLengthError is a ValidationError with its own code", () => {
  const err = new ContextLengthError("too long");
  assert(err instanceof ValidationError);
  assertEquals(err.status, 400);
  assertEquals(err.code, "context_length_exceeded");
});

Deno.test("errors keep their cause and retry hints", () => {
  const cause = new Error("socket closed");
  const err = new ServiceError("engine unreachable", { cause });
  assertEquals(err.cause, cause);
  assertEquals(new RateLimitError("busy", { retryAfterSeconds: 3 }).retryAfterSeconds, 3);
});

Deno.test("every error takes status, code and exit code from its row of ERROR_TABLE", () => {
  for (const row of ERROR_TABLE) {
    const ErrorClass = row.error as new (message: string) => SvcException;
    const err = new ErrorClass("m");
    assertEquals([err.status, err.code, err.exitCode], [row.status, row.code, row.exitCode]);
    assertEquals(errorMapping(err), row);
    assertEquals(errorMapping(ErrorClass), row);
  }
  class GoneError extends NotFoundError {}
  assertEquals(new GoneError("g").status, 404);
  const custom = new SvcException("c", {}, { code: "mine", status: 418, exitCode: 3 });
  assertEquals([custom.code, custom.status, custom.exitCode], ["mine", 418, 3]);
  assertEquals(errorMapping(new TypeError("t")).error, SvcException);
});

Deno.test("errorMappingForStatus() reads statuses back as classes, 4xx and 5xx by default", () => {
  assertEquals(errorMappingForStatus(400).error, ValidationError);
  assertEquals(errorMappingForStatus(422).error, ValidationError);
  assertEquals(errorMappingForStatus(401).error, AuthenticationError);
  assertEquals(errorMappingForStatus(403).error, AuthenticationError);
  assertEquals(errorMappingForStatus(404).error, NotFoundError);
  assertEquals(errorMappingForStatus(418).error, ValidationError);
  assertEquals(errorMappingForStatus(429).error, RateLimitError);
  assertEquals(errorMappingForStatus(499).error, CancelledError);
  assertEquals(errorMappingForStatus(500).error, ServiceError);
  assertEquals(errorMappingForStatus(503).error, ServiceUnavailableError);
  // Rendering still tells 403 apart.
  assertEquals(new PermissionDeniedError("p").status, 403);
});

Deno.test("isRetryable() is true for rate limits and unavailability only", () => {
  assert(isRetryable(new RateLimitError("r")));
  assert(isRetryable(new ServiceUnavailableError("s")));
  assert(isRetryable(429) && isRetryable(503));
  assert(!isRetryable(new ServiceError("s")) && !isRetryable(new ValidationError("v")));
  assert(!isRetryable(500) && !isRetryable(new Error("e")) && !isRetryable("x"));
});
