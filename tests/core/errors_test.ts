import { assert, assertEquals } from "../_assert.ts";
import {
  ConfigurationError,
  ContextLengthError,
  RateLimitError,
  ServiceError,
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
