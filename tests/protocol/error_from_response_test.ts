import {
  AuthenticationError,
  ContextLengthError,
  NotFoundError,
  RateLimitError,
  ServiceError,
  ServiceUnavailableError,
  ValidationError,
} from "../../src/core/errors.ts";
import {
  errorFromResponse,
  errorFromStatus,
  errorFromStreamEvent,
  parseErrorBody,
  retryAfterSeconds,
} from "../../src/protocol/error_from_response.ts";
import { assert, assertEquals, assertMatch } from "../_assert.ts";

const message = (text: string) => parseErrorBody(text).message;

Deno.test("parseErrorBody() finds the error text of each provider's error body", () => {
  assertEquals(message('{"error":{"message":"openai says"}}'), "openai says");
  assertEquals(message('{"error":"ollama says"}'), "ollama says");
  assertEquals(message('{"message":"cohere says"}'), "cohere says");
  assertEquals(message('{"Message":"aws says"}'), "aws says");
  assertEquals(message('{"detail":"jina says"}'), "jina says");
  assertEquals(message('{"detail":[{"msg":"a"},{"msg":"b"}]}'), "a; b");
  assertEquals(message("<html>Bad gateway</html>"), "<html>Bad gateway</html>");
  assertEquals(message(""), "(empty body)");
});

Deno.test("parseErrorBody() keeps code, param and type, folds white space and clips", () => {
  const answer = parseErrorBody(
    '{"error":{"message":"too\\n  long","code":"context_length_exceeded","param":"messages",' +
      '"type":"invalid_request_error"}}',
  );
  assertEquals(answer, {
    message: "too long",
    code: "context_length_exceeded",
    param: "messages",
    type: "invalid_request_error",
  });
  assertEquals(parseErrorBody('{"error":{"message":"x","code":1214}}').code, "1214");
  assertEquals(parseErrorBody("x".repeat(400)).message, `${"x".repeat(300)}…`);
  assertEquals(parseErrorBody("y".repeat(400), { maxChars: 2000 }).message.length, 400);
});

Deno.test("retryAfterSeconds() reads seconds and HTTP dates, undefined otherwise", () => {
  assertEquals(retryAfterSeconds(new Headers({ "retry-after": "7" })), 7);
  assertEquals(retryAfterSeconds(new Headers()), undefined);
  assertEquals(retryAfterSeconds(new Headers({ "retry-after": "soon" })), undefined);
  const later = new Date(Date.now() + 60_000).toUTCString();
  const seconds = retryAfterSeconds(new Headers({ "retry-after": later }))!;
  assert(seconds > 55 && seconds <= 60, `${seconds}`);
});

Deno.test("errorFromStatus() picks the class by status and carries the server's code", () => {
  const answer = (code: string | null) => ({ message: "m", code, param: "p", type: null });
  const source = { source: "http://x/v1/chat/completions" };
  const ctx = errorFromStatus(400, answer("context_length_exceeded"), source);
  assert(ctx instanceof ContextLengthError);
  assertEquals(ctx.param, "p");
  assertMatch(ctx.message, /^m \(HTTP 400 from http:\/\/x\/v1\/chat\/completions\)$/);
  assert(errorFromStatus(422, answer(null), source) instanceof ValidationError);
  assert(errorFromStatus(404, answer("model_not_found"), source) instanceof NotFoundError);
  const down = errorFromStatus(503, answer(null), { ...source, retryAfterSeconds: 4 });
  assert(down instanceof ServiceUnavailableError);
  assertEquals(down.retryAfterSeconds, 4);
  const failed = errorFromStatus(500, answer(null), source);
  assert(failed instanceof ServiceError);
  assertEquals(failed.status, 500);
  const auth = errorFromStatus(401, answer(null), { ...source, keyHint: "SVC_CHAT_API_KEY" });
  assert(auth instanceof AuthenticationError);
  assertMatch(auth.message, /; check SVC_CHAT_API_KEY$/);
});

Deno.test("errorFromStatus() with upstream keeps only 401/403/429 apart", () => {
  const answer = { message: "no route", code: "404", param: null, type: null };
  const opts = { source: "Zhipu AI at http://x", upstream: true };
  const missing = errorFromStatus(404, answer, opts);
  assert(missing instanceof ServiceError);
  assertEquals(missing.code, "upstream_http_404");
  const refused = errorFromStatus(403, answer, { ...opts, keyHint: "ZHIPUAI_API_KEY" });
  assert(refused instanceof AuthenticationError);
  assertEquals(refused.code, "invalid_api_key", "the provider's own code is not ours");
  const limited = errorFromStatus(429, answer, { ...opts, retryAfterSeconds: 0 });
  assert(limited instanceof RateLimitError);
  assertEquals(limited.retryAfterSeconds, 1, "Retry-After 0 keeps the default pause");
});

Deno.test("errorFromResponse() reads the body and Retry-After of an answer", async () => {
  const err = await errorFromResponse(
    Response.json({ error: { message: "slow down" } }, {
      status: 429,
      headers: { "retry-after": "3" },
    }),
    { source: "the chat server" },
  );
  assert(err instanceof RateLimitError);
  assertEquals(err.retryAfterSeconds, 3);
  assertEquals(err.message, "slow down (HTTP 429 from the chat server)");
});

Deno.test("errorFromStreamEvent() takes the status from the event's type", () => {
  const err = errorFromStreamEvent(
    { error: { message: "stopped", type: "service_unavailable_error", code: "engine_stopped" } },
    "http://x",
  );
  assert(err instanceof ServiceUnavailableError);
  assertEquals(err.code, "engine_stopped");
  assert(errorFromStreamEvent({ error: { message: "?" } }, "http://x") instanceof ServiceError);
});
