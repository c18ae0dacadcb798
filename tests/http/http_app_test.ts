import { RateLimitError, ValidationError } from "../../src/core/errors.ts";
import { createHttpApp, type RouteDefinition } from "../../src/http/http_app.ts";
import type { HttpLogger } from "../../src/http/logger.ts";
import { MetricsRegistry } from "../../src/http/metrics.ts";
import { get, post } from "../_helpers/http.ts";
import { assert, assertEquals, assertMatch } from "../_assert.ts";

function spyLogger(): HttpLogger & { lines: string[] } {
  const lines: string[] = [];
  return {
    lines,
    error: (m, f) => lines.push(`error ${m} ${JSON.stringify(f)}`),
    warn: (m) => lines.push(`warn ${m}`),
  };
}

const ROUTES: RouteDefinition[] = [
  { method: "GET", path: "/health", public: true, handler: () => Response.json({ status: "ok" }) },
  { method: "POST", path: "/echo", handler: async (ctx) => Response.json(await ctx.readJson()) },
  { method: "GET", path: "/items/:id*", handler: (ctx) => Response.json(ctx.params) },
  {
    method: "GET",
    path: "/boom",
    handler: () => {
      throw new TypeError("internal secret at /srv/x");
    },
  },
  {
    method: "GET",
    path: "/busy",
    handler: () => {
      throw new RateLimitError("queue full", { retryAfterSeconds: 7 });
    },
  },
  { method: "GET", path: "/redirect", handler: () => Response.redirect("http://localhost/x", 302) },
];

async function errorOf(
  res: Response,
): Promise<{ message: string; type: string; param: unknown; code: unknown }> {
  const body = await res.json();
  assertEquals(Object.keys(body.error).sort(), ["code", "message", "param", "type"]);
  return body.error;
}

Deno.test("createHttpApp() answers an unknown path with a 404 OpenAI error", async () => {
  const app = createHttpApp(ROUTES, { logger: spyLogger() });
  const res = await get(app, "/v2/nothing");
  assertEquals(res.status, 404);
  const err = await errorOf(res);
  assertEquals(err.type, "not_found_error");
  assertEquals(err.code, "unknown_url");
  assertMatch(err.message, /GET \/v2\/nothing/);
  // It lists what exists instead of guessing at a prefix.
  assertMatch(err.message, /It serves: .*GET \/health/);
});

Deno.test("createHttpApp() answers a wrong method with 405 and an Allow header", async () => {
  const app = createHttpApp(ROUTES);
  const res = await post(app, "/health", {});
  assertEquals(res.status, 405);
  assertEquals(res.headers.get("allow"), "GET, HEAD");
  assertEquals((await errorOf(res)).code, "method_not_allowed");
  const del = await app(new Request("http://localhost/echo", { method: "DELETE" }));
  assertEquals(del.status, 405);
  assertEquals(del.headers.get("allow"), "POST");
  await del.body?.cancel();
});

Deno.test("createHttpApp() decodes path parameters, slashes included", async () => {
  const app = createHttpApp(ROUTES);
  assertEquals(await (await get(app, "/items/demo/chat")).json(), { id: "demo/chat" });
  assertEquals(await (await get(app, "/items/demo%2Fchat")).json(), { id: "demo/chat" });
  assertEquals((await get(app, "/items/%E0%A4%A")).status, 404);
});

Deno.test("createHttpApp() requires the bearer key everywhere but public routes and OPTIONS", async () => {
  const app = createHttpApp(ROUTES, { apiKey: "s3cret" });
  assertEquals((await get(app, "/health")).status, 200);
  const missing = await post(app, "/echo", { a: 1 });
  assertEquals(missing.status, 401);
  const missingErr = await errorOf(missing);
  assertEquals(missingErr.type, "authentication_error");
  assertMatch(missingErr.message, /Authorization: Bearer/);
  const wrong = await post(app, "/echo", { a: 1 }, { headers: { authorization: "Bearer nope" } });
  assertEquals(wrong.status, 401);
  assert(!(await wrong.text()).includes("nope"), "the offered key is never echoed");
  const basic = await post(app, "/echo", {}, { headers: { authorization: "Basic czNjcmV0" } });
  assertEquals(basic.status, 401);
  await basic.body?.cancel();
  const ok = await post(app, "/echo", { a: 1 }, { headers: { authorization: "bearer s3cret" } });
  assertEquals(await ok.json(), { a: 1 });
  // Unknown paths and wrong methods do not reveal anything without the key.
  assertEquals((await get(app, "/nothing")).status, 401);
  const options = await app(new Request("http://localhost/echo", { method: "OPTIONS" }));
  assertEquals(options.status, 204);
});

Deno.test("createHttpApp() answers CORS preflights and adds CORS headers", async () => {
  const app = createHttpApp(ROUTES);
  const pre = await app(
    new Request("http://localhost/echo", {
      method: "OPTIONS",
      headers: {
        origin: "https://app.example",
        "access-control-request-method": "POST",
        "access-control-request-headers": "authorization, content-type",
      },
    }),
  );
  assertEquals(pre.status, 204);
  assertEquals(pre.headers.get("access-control-allow-origin"), "*");
  assertEquals(pre.headers.get("access-control-allow-methods"), "POST, OPTIONS");
  assertEquals(pre.headers.get("access-control-allow-headers"), "authorization, content-type");
  const res = await get(app, "/health", { origin: "https://app.example" });
  assertEquals(res.headers.get("access-control-allow-origin"), "*");
  assertMatch(res.headers.get("access-control-expose-headers")!, /x-request-id/);
  await res.body?.cancel();
});

Deno.test("createHttpApp() echoes only configured origins, and no CORS when disabled", async () => {
  const app = createHttpApp(ROUTES, { cors: { origins: ["https://ok.example"] } });
  const ok = await get(app, "/health", { origin: "https://ok.example" });
  assertEquals(ok.headers.get("access-control-allow-origin"), "https://ok.example");
  assertEquals(ok.headers.get("vary"), "Origin");
  const other = await get(app, "/health", { origin: "https://evil.example" });
  assertEquals(other.headers.get("access-control-allow-origin"), null);
  const off = createHttpApp(ROUTES, { cors: false });
  const res = await get(off, "/health", { origin: "https://ok.example" });
  assertEquals(res.headers.get("access-control-allow-origin"), null);
  await Promise.all([ok, other, res].map((r) => r.body?.cancel()));
});

Deno.test("createHttpApp() turns bad bodies into 400 and big ones into 413", async () => {
  const app = createHttpApp(ROUTES, { maxBodyBytes: 100 });
  const bad = await post(app, "/echo", "{not json");
  assertEquals(bad.status, 400);
  assertEquals((await errorOf(bad)).code, "invalid_json");
  const empty = await post(app, "/echo", "");
  assertEquals((await errorOf(empty)).code, "invalid_json");
  const utf8 = await post(app, "/echo", new Uint8Array([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]));
  assertEquals(utf8.status, 400);
  assertEquals((await errorOf(utf8)).code, "invalid_encoding");
  const big = await post(app, "/echo", { text: "x".repeat(200) });
  assertEquals(big.status, 413);
  assertEquals((await errorOf(big)).code, "payload_too_large");
});

Deno.test("createHttpApp() stops reading a streamed body at the limit", async () => {
  const app = createHttpApp(ROUTES, { maxBodyBytes: 1000 });
  let pulled = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(c) {
      pulled++;
      if (pulled > 1000) c.close();
      else c.enqueue(new Uint8Array(100).fill(0x20));
    },
  });
  const res = await app(new Request("http://localhost/echo", { method: "POST", body }));
  assertEquals(res.status, 413);
  assert(pulled < 20, `read ${pulled} chunks after the limit`);
  await res.body?.cancel();
});

Deno.test("createHttpApp() hides unexpected errors behind a logged 500", async () => {
  const logger = spyLogger();
  const app = createHttpApp(ROUTES, { logger });
  const res = await get(app, "/boom");
  assertEquals(res.status, 500);
  const err = await errorOf(res);
  assertEquals(err.type, "server_error");
  assert(!err.message.includes("secret"));
  assert(err.message.includes(res.headers.get("x-request-id")!));
  assertEquals(logger.lines.length, 1);
  assertMatch(logger.lines[0], /internal secret/);
});

Deno.test("createHttpApp() sends Retry-After with 429", async () => {
  const res = await get(createHttpApp(ROUTES), "/busy");
  assertEquals(res.status, 429);
  assertEquals(res.headers.get("retry-after"), "7");
  assertEquals((await errorOf(res)).type, "rate_limit_error");
});

Deno.test("createHttpApp() answers HEAD without a body and copies immutable responses", async () => {
  const app = createHttpApp(ROUTES);
  const head = await app(new Request("http://localhost/health", { method: "HEAD" }));
  assertEquals(head.status, 200);
  assertEquals(head.body, null);
  const redirect = await get(app, "/redirect");
  assertEquals(redirect.status, 302);
  assert(redirect.headers.get("x-request-id"));
});

Deno.test("createHttpApp() counts requests, errors, latency and in-flight", async () => {
  const metrics = new MetricsRegistry();
  const app = createHttpApp(ROUTES, { metrics });
  await (await get(app, "/health")).body?.cancel();
  await (await post(app, "/echo", "nope")).body?.cancel();
  await (await get(app, "/unknown/path")).body?.cancel();
  const text = metrics.render();
  assertMatch(text, /svc_http_requests_total\{route="\/health",method="GET",status="200"\} 1/);
  assertMatch(text, /svc_http_errors_total\{route="\/echo",code="invalid_json"\} 1/);
  assertMatch(text, /svc_http_requests_total\{route="unmatched",method="GET",status="404"\} 1/);
  assertMatch(text, /svc_http_request_duration_seconds_count\{route="\/health"\} 1/);
  assertMatch(text, /svc_http_requests_in_flight 0/);
});

Deno.test("createHttpApp() counts a stream the client cancels as 499 cancelled", async () => {
  const metrics = new MetricsRegistry();
  const app = createHttpApp([{
    method: "GET",
    path: "/events",
    handler: () =>
      new Response(new ReadableStream({ pull: (c) => c.enqueue(new Uint8Array(1)) }), {
        headers: { "content-type": "text/event-stream" },
      }),
  }], { metrics });
  const res = await get(app, "/events");
  const reader = res.body!.getReader();
  await reader.read();
  await reader.cancel();
  const text = metrics.render();
  assertMatch(text, /svc_http_requests_total\{route="\/events",method="GET",status="499"\} 1/);
  assertMatch(text, /svc_http_errors_total\{route="\/events",code="cancelled"\} 1/);
  assertMatch(text, /svc_http_requests_in_flight 0/);
});

Deno.test("createHttpApp() counts an error answer by the code its route gives, if it looks like one", async () => {
  const metrics = new MetricsRegistry();
  const app = createHttpApp([{
    method: "GET",
    path: "/passed-on",
    handler: (ctx) => {
      const code = ctx.url.searchParams.get("code")!;
      ctx.setErrorCode(code);
      return Response.json({ error: { code } }, { status: 400 });
    },
  }], { metrics });
  for (const code of ["model_not_found", "Not A Code", "x".repeat(65)]) {
    await (await get(app, `/passed-on?code=${encodeURIComponent(code)}`)).body?.cancel();
  }
  const text = metrics.render();
  assertMatch(text, /svc_http_errors_total\{route="\/passed-on",code="model_not_found"\} 1/);
  assertMatch(text, /svc_http_errors_total\{route="\/passed-on",code="http_400"\} 2/);
});

Deno.test("createHttpApp() reports ValidationError params from handlers", async () => {
  const app = createHttpApp([{
    method: "POST",
    path: "/v",
    handler: () => {
      throw new ValidationError("n must be 1", { param: "n" });
    },
  }]);
  const err = await errorOf(await post(app, "/v", {}));
  assertEquals(err.param, "n");
  assertEquals(err.type, "invalid_request_error");
});
