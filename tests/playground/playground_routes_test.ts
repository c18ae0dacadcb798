// GET / on the engine server and the gateway: the page for browsers (with its CSP), a JSON
// description for other clients, public assets, and the dashboard tab only on the gateway.
import { assert, assertEquals, assertMatch } from "../_assert.ts";
import { Dispatcher } from "../../src/gateway/dispatcher.ts";
import { createGatewayApp } from "../../src/gateway/gateway_app.ts";
import { createEngineApp } from "../../src/server/engine_app.ts";
import { PLAYGROUND_CSP } from "../../src/playground/playground_routes.ts";
import { FakeEngine } from "../_helpers/fake_engine.ts";

const HTML = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"; // Chromium's
const get = (app: (r: Request) => Promise<Response>, path: string, accept?: string) =>
  app(new Request(`http://127.0.0.1:8000${path}`, accept ? { headers: { accept } } : {}));

Deno.test("GET / gives browsers the page with a strict Content-Security-Policy", async () => {
  const app = createEngineApp({ engines: [new FakeEngine()] });
  const res = await get(app, "/", HTML);
  assertEquals(res.status, 200);
  assertEquals(res.headers.get("content-type"), "text/html; charset=utf-8");
  assertEquals(res.headers.get("content-security-policy"), PLAYGROUND_CSP);
  assertMatch(PLAYGROUND_CSP, /default-src 'none'; script-src 'self'; style-src 'self'/);
  assertEquals(res.headers.get("x-content-type-options"), "nosniff");
  assertEquals(res.headers.get("vary"), "Accept");
  const html = await res.text();
  assertMatch(html, /<script src="\/playground\/app.js" defer><\/script>/);
  assert(!/<script>|<style|style=/.test(html), "no inline script or style (the CSP forbids it)");
  assert(!html.includes("tab-dashboard"), "an engine server has no dashboard");
});

Deno.test("GET / keeps a JSON answer for JSON clients", async () => {
  const app = createEngineApp({ engines: [new FakeEngine()] });
  for (const accept of [undefined, "application/json", "*/*"]) {
    const res = await get(app, "/", accept);
    assertEquals(res.status, 200, String(accept));
    assertEquals(res.headers.get("content-type"), "application/json");
    const body = await res.json();
    assertEquals([body.object, body.api_base, body.health], ["server", "/v1", "/health"]);
  }
});

Deno.test("the page and its assets need no key; the API behind them does", async () => {
  const dispatcher = new Dispatcher();
  const app = createGatewayApp({ dispatcher, apiKey: "k" });
  try {
    const page = await get(app, "/", HTML);
    assertEquals(page.status, 200);
    assertMatch(await page.text(), /id="tab-dashboard"/);
    const js = await get(app, "/playground/app.js");
    assertEquals(js.headers.get("content-type"), "text/javascript; charset=utf-8");
    assertMatch(await js.text(), /\/v1\/management\/dashboard/);
    const css = await get(app, "/playground/app.css");
    assertEquals(css.headers.get("content-type"), "text/css; charset=utf-8");
    await css.body?.cancel();
    const json = await get(app, "/");
    assertEquals((await json.json()).dashboard, "/v1/management/dashboard");
    const models = await get(app, "/v1/models");
    assertEquals(models.status, 401);
    await models.body?.cancel();
  } finally {
    dispatcher.close();
  }
});

Deno.test("the page script parses (no syntax error slipped into the embedded text)", async () => {
  const app = createEngineApp({ engines: [new FakeEngine()] });
  const js = await (await get(app, "/playground/app.js")).text();
  // Compiles without running: a syntax error throws here.
  new Function(js);
});
