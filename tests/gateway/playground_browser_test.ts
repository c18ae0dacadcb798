// The playground page end to end in a real browser (Debian's chromium via playwright-core),
// against a real gateway in front of two engine servers on the demo models (random weights):
// chat streaming, the embeddings matrix, the live dashboard (with usage per managed key, from a
// SQLite state store), the API-key prompt, and a page of another origin that must not read the
// dashboard data. Screenshots are decoded and checked.
import { join } from "node:path";
import type { Page } from "playwright-core";
import { assert, assertEquals, assertMatch } from "../_assert.ts";
import { setupLogger } from "../../src/core/logging.ts";
import { type GatewayServer, startGateway } from "../../src/gateway/gateway_server.ts";
import type { EngineServer } from "../../src/server/engine_server.ts";
import type { HttpLogger } from "../../src/http/logger.ts";
import { serveApp } from "../../src/http/serve.ts";
import { openStateStore } from "../../src/state/open_state_store.ts";
import type { StateStore } from "../../src/state/state_store.ts";
import { CHROMIUM_MISSING, launchBrowser } from "../_helpers/browser.ts";
import { demoEngineServer } from "../_helpers/demo_server.ts";
import { readPng } from "../_helpers/png.ts";

setupLogger("error");
const QUIET: HttpLogger = { error: () => {}, warn: () => {} };
const KEY = "playground-key-789";
// Kept when set (to look at them); otherwise a temporary folder removed at the end.
const SHOTS_ENV = "SVC_SCREENSHOT_DIR";

async function startStack(
  engines: EngineServer[],
  options: { apiKey?: string; state?: StateStore } = {},
): Promise<GatewayServer> {
  const gw = await startGateway({
    ...options,
    logger: QUIET,
    backends: [
      { id: "chat-1", baseUrl: engines[0].baseUrl, kind: "llm", models: ["demo/chat"] },
      { id: "embed-1", baseUrl: engines[1].baseUrl, kind: "embedding", models: ["demo/embed"] },
    ],
  });
  // Chat only once both backends are healthy: a probe that times out on a loaded machine (2 s)
  // leaves a backend unhealthy until the next round, and a chat sent then fails at once.
  const deadline = Date.now() + 60_000;
  do await gw.gateway.checker.checkAll(); while (
    gw.gateway.dispatcher.backends().some((b) => b.health !== "healthy") && Date.now() < deadline
  );
  return gw;
}

async function checkScreenshot(page: Page, dir: string, name: string): Promise<void> {
  const path = join(dir, `${name}.png`);
  await page.screenshot({ path });
  const png = await readPng(await Deno.readFile(path));
  assertEquals([png.width, png.height], [1280, 800], `${name}: viewport-sized`);
  assert(png.variance > 50, `${name}: not blank (grey variance ${png.variance.toFixed(1)})`);
  assert(png.colours > 20, `${name}: more than a few colours (${png.colours})`);
}

function gatewayJson(gw: GatewayServer, path: string, body?: unknown, key?: string) {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (key) headers.authorization = `Bearer ${key}`;
  return fetch(`${gw.url}${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  }).then(async (res) => {
    assertEquals(res.status, 200, `${path}: ${await res.clone().text()}`);
    return await res.json();
  });
}

Deno.test({
  name: "playground: chat, embeddings, dashboard, API key and origin rules in a real browser",
  ignore: CHROMIUM_MISSING !== null,
  // playwright-core talks to chromium through node:child_process pipes it keeps between calls.
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async (t) => {
    const engines = [
      await demoEngineServer("demo/chat"),
      await demoEngineServer("demo/embed", undefined, { withReranker: true }),
    ];
    const state = await openStateStore("sqlite::memory:");
    const gw = await startStack(engines, { state });
    const keyed = await startStack(engines, { apiKey: KEY });
    const foreign = serveApp(
      () =>
        Promise.resolve(
          new Response("<!doctype html><title>other site</title><p>hi</p>", {
            headers: { "content-type": "text/html" },
          }),
        ),
      { port: 0, logger: QUIET },
    );
    const browser = await launchBrowser();
    const keep = Deno.env.get(SHOTS_ENV);
    const shots = keep ?? await Deno.makeTempDir({ prefix: "svc-shots-" });
    try {
      const page = await browser.context.newPage();
      const pageErrors: string[] = [];
      page.on("pageerror", (e) => pageErrors.push(e.message));
      page.on("console", (m) => m.type() === "error" && pageErrors.push(m.text()));

      await t.step("the page loads with a strict CSP and lists the models", async () => {
        const res = await page.goto(gw.url);
        assertEquals(res?.status(), 200);
        assertMatch(res!.headers()["content-security-policy"], /default-src 'none'/);
        assertEquals(await page.title(), "Svc playground");
        await page.waitForSelector("#chat-model option[value='demo/chat']", { state: "attached" });
        assertEquals(
          await page.$$eval("#embed-model option", (o) => o.map((x) => x.getAttribute("value"))),
          ["demo/embed"],
        );
        // The message box has the focus: typing works at once.
        assertEquals(await page.evaluate("document.activeElement?.id"), "chat-input");
        // Tab walks the controls in reading order (one stop for the tab list, as in the ARIA
        // pattern; Stop is disabled while nothing runs).
        await page.focus("#tab-chat");
        const order: unknown[] = [];
        for (let i = 0; i < 8; i++) {
          await page.keyboard.press("Tab");
          order.push(await page.evaluate("document.activeElement?.id"));
        }
        assertEquals(order, [
          "key-button",
          "chat-model",
          "chat-max-tokens",
          "chat-temperature",
          "chat-system",
          "chat-clear",
          "chat-input",
          "chat-send",
        ]);
      });

      await t.step("Enter sends, Shift+Enter is a new line, the answer streams in", async () => {
        await page.fill("#chat-max-tokens", "12");
        await page.fill("#chat-temperature", "0");
        const sent: unknown[] = [];
        page.on(
          "request",
          (r) => r.url().endsWith("/v1/chat/completions") && sent.push(r.postDataJSON()),
        );
        await page.focus("#chat-input");
        await page.keyboard.type("Hello");
        await page.keyboard.press("Shift+Enter");
        await page.keyboard.type("there");
        assertEquals(sent.length, 0, "Shift+Enter did not send");
        await page.keyboard.press("Enter");
        // (Not a wait for the `.streaming` state: it may come and go between two polls.)
        await page.waitForSelector(".message.assistant", { state: "attached" });
        await page.waitForSelector(".message.assistant:not(.streaming)");
        const answer = await page.textContent(".message.assistant .content");
        const failed = await page.$(".message.assistant.failed");
        assert(
          failed === null,
          `the chat failed: ${answer} (${await page.textContent("#chat-status")})`,
        );
        assertEquals(await page.textContent(".message.user .content"), "Hello\nthere");
        assertEquals(await page.inputValue("#chat-input"), "", "the box is emptied");
        const request = sent[0] as { stream: boolean; messages: unknown[]; max_tokens: number };
        assertEquals(request.stream, true);
        assertEquals(request.max_tokens, 12);
        // Oracle: the same request answered as JSON by the gateway gives the same text.
        const oracle = await gatewayJson(gw, "/v1/chat/completions", {
          ...request,
          stream: false,
          stream_options: undefined,
        });
        assert(answer !== null && answer.length > 0, "an answer was shown");
        assertEquals(answer, oracle.choices[0].message.content);
        assertMatch(await page.textContent("#chat-status") ?? "", /\d+ tokens, [\d.]+ tokens\/s/);
        await checkScreenshot(page, shots, "chat");
      });

      await t.step("the embeddings view shows the cosine-similarity matrix", async () => {
        await page.click("#tab-embeddings");
        const texts = ["red apples", "green apples", "a tax form"];
        await page.fill("#embed-input", texts.join("\n"));
        await page.click("#embed-send");
        await page.waitForSelector("table.matrix, #embed-status.error");
        assertEquals(
          await page.$("#embed-status.error"),
          null,
          await page.textContent("#embed-status") ?? "",
        );
        const cells = await page.$$eval(
          "table.matrix tbody tr",
          (rows) => rows.map((r) => [...r.querySelectorAll("td")].map((c) => c.textContent)),
        );
        const oracle = await gatewayJson(gw, "/v1/embeddings", {
          model: "demo/embed",
          input: texts,
        });
        const vectors: number[][] = oracle.data.map((d: { embedding: number[] }) => d.embedding);
        const cos = (a: number[], b: number[]) =>
          a.reduce((s, x, i) => s + x * b[i], 0) /
          Math.sqrt(a.reduce((s, x) => s + x * x, 0) * b.reduce((s, x) => s + x * x, 0));
        assertEquals(
          cells,
          vectors.map((a) => vectors.map((b) => cos(a, b).toFixed(3))),
        );
        assertEquals(cells[0][0], "1.000");
        await checkScreenshot(page, shots, "embeddings");
      });

      await t.step("the dashboard shows the engines and updates", async () => {
        await page.focus("#tab-embeddings");
        await page.keyboard.press("ArrowRight");
        await page.waitForSelector("#dash-engines tr[data-engine='chat-1'], #dash-status.error");
        assertEquals(
          await page.$("#dash-status.error"),
          null,
          await page.textContent("#dash-status") ?? "",
        );
        const row = (id: string) =>
          page.$$eval(
            `#dash-engines tr[data-engine='${id}'] > *`,
            (c) => c.map((x) => x.textContent),
          );
        const chat = await row("chat-1");
        assertEquals(chat.slice(0, 6), [
          "chat-1",
          "chat",
          "demo/chat",
          "registered",
          "healthy",
          "closed",
        ]);
        assertEquals((await row("embed-1"))[1], "embedding");
        const before = Number(chat[7]);
        assert(before >= 2, `the chat requests are counted (${before})`);
        // A request from elsewhere shows up at the next poll, with no reload.
        await gatewayJson(gw, "/v1/chat/completions", {
          model: "demo/chat",
          messages: [{ role: "user", content: "more" }],
          max_tokens: 4,
        });
        // (Polled from here: the page's CSP forbids playwright's string-evaluating waits.)
        const deadline = Date.now() + 20_000;
        while (Number((await row("chat-1"))[7]) <= before) {
          assert(Date.now() < deadline, "the dashboard did not update within 20 s");
          await new Promise((r) => setTimeout(r, 200));
        }
        const summary = await page.textContent("#dash-summary");
        assertMatch(summary ?? "", /Generated tokens[1-9]\d*/);
        // A state store but no managed key yet: no usage table.
        assert(await page.isHidden("#dash-usage-section"), "no usage without managed keys");
        await checkScreenshot(page, shots, "dashboard");
      });

      await t.step("the dashboard shows a key's usage after a chat with it", async () => {
        const made = await fetch(`${gw.url}/v1/management/keys`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ name: "team-browser", scope: "inference", rpm: 60, tpm: 5000 }),
        });
        assertEquals(made.status, 201);
        const key = await made.json() as { id: string; key: string; prefix: string };
        const answer = await gatewayJson(gw, "/v1/chat/completions", {
          model: "demo/chat",
          messages: [{ role: "user", content: "count me" }],
          max_tokens: 4,
        }, key.key);
        const rowSel = `#dash-usage tr[data-key='${key.id}'][data-model='demo/chat']`;
        // Read every few seconds by the gateway, polled every 2 s by the page.
        await page.waitForSelector(`${rowSel} td.requests`, { timeout: 20_000 });
        const cells = await page.$$eval(`${rowSel} > *`, (c) => c.map((x) => x.textContent));
        assertEquals(cells, [
          `team-browser${key.prefix}\u2026`,
          "demo/chat",
          "1",
          String(answer.usage.prompt_tokens),
          String(answer.usage.completion_tokens),
          "60 rpm, 5,000 tpm",
        ]);
        assertEquals(
          await page.textContent("#dash-usage-day"),
          new Date().toISOString().slice(0, 10),
        );
        assert(!(await page.content()).includes(key.key), "the key's secret is not on the page");
        await checkScreenshot(page, shots, "dashboard-usage");
      });

      await t.step("a page of another origin cannot read the dashboard data", async () => {
        const other = await browser.context.newPage();
        await other.goto(foreign.url.replace("127.0.0.1", "localhost"));
        const outcome = await other.evaluate(async (url) => {
          try {
            const res = await fetch(url);
            return `read ${res.status}: ${await res.text()}`;
          } catch (err) {
            return `blocked: ${(err as Error).name}`;
          }
        }, `${gw.url}/v1/management/dashboard`);
        assertEquals(outcome, "blocked: TypeError");
        // The gateway refused it, too (not only the browser hiding the answer).
        const metrics = await (await fetch(`${gw.url}/metrics`)).text();
        assertMatch(
          metrics,
          /http_errors_total\{route="\/v1\/management\/dashboard",code="origin_not_allowed"\} 1/,
        );
        await other.close();
      });

      await t.step("with an API key the page asks for it, then works", async () => {
        const keyedPage = await browser.context.newPage();
        await keyedPage.goto(keyed.url);
        await keyedPage.waitForSelector("#key-dialog[open]");
        assertEquals(await keyedPage.evaluate("document.activeElement?.id"), "key-input");
        await keyedPage.keyboard.type("wrong-key");
        await keyedPage.keyboard.press("Enter");
        await keyedPage.locator("#key-message", { hasText: "refused" }).waitFor();
        await keyedPage.fill("#key-input", KEY);
        await keyedPage.keyboard.press("Enter");
        await keyedPage.waitForSelector("#chat-model option[value='demo/chat']", {
          state: "attached",
        });
        assertEquals(await keyedPage.evaluate(`sessionStorage.getItem("svc.apiKey")`), KEY);
        await keyedPage.fill("#chat-max-tokens", "4");
        await keyedPage.fill("#chat-input", "hi");
        await keyedPage.press("#chat-input", "Enter");
        await keyedPage.waitForSelector(".message.assistant:not(.streaming)");
        assert(!(await keyedPage.$(".message.failed")), "the keyed chat succeeded");
        await keyedPage.click("#tab-dashboard");
        await keyedPage.waitForSelector("#dash-engines tr[data-engine='chat-1']");
        assert(await keyedPage.isHidden("#dash-usage-section"), "no state store: no usage");
        await checkScreenshot(keyedPage, shots, "keyed-dashboard");
        await keyedPage.close();
      });

      await t.step(
        "a key prompt dismissed with Escape says why; the API key button recovers",
        async () => {
          const fresh = await browser.context.newPage(); // a new tab: an empty sessionStorage
          await fresh.goto(keyed.url);
          await fresh.waitForSelector("#key-dialog[open]");
          await fresh.keyboard.press("Escape");
          await fresh.locator("#chat-status.error", { hasText: "no API key given" }).waitFor();
          assertEquals(await fresh.textContent("#chat-model"), "Could not list models");
          await fresh.click("#key-button");
          await fresh.fill("#key-input", KEY);
          await fresh.keyboard.press("Enter");
          await fresh.waitForSelector("#chat-model option[value='demo/chat']", {
            state: "attached",
          });
          await fresh.close();
        },
      );

      await t.step("an engine server serves the page too, without the dashboard", async () => {
        const enginePage = await browser.context.newPage();
        await enginePage.goto(engines[0].served.url);
        await enginePage.waitForSelector("#chat-model option[value='demo/chat']", {
          state: "attached",
        });
        assertEquals(await enginePage.$("#tab-dashboard"), null);
        assertEquals(await enginePage.textContent("#embed-model"), "No embedding model");
        await enginePage.fill("#chat-max-tokens", "4");
        await enginePage.fill("#chat-input", "hi");
        await enginePage.press("#chat-input", "Enter");
        await enginePage.waitForSelector(".message.assistant:not(.streaming)");
        assert(!(await enginePage.$(".message.failed")), "the engine server answered");
        await enginePage.close();
      });

      await t.step(
        "a reranker is offered neither as a chat nor as an embedding model",
        async () => {
          const enginePage = await browser.context.newPage();
          await enginePage.goto(engines[1].served.url);
          await enginePage.waitForSelector("#embed-model option[value='demo/embed']", {
            state: "attached",
          });
          const values = (select: string) =>
            enginePage.$$eval(`${select} option`, (o) => o.map((x) => x.getAttribute("value")));
          assertEquals(await values("#embed-model"), ["demo/embed"]);
          assertEquals(await enginePage.textContent("#chat-model"), "No chat model");
          await enginePage.close();
        },
      );

      await t.step(
        "a demo model's random weights are said on the page; at 390 px nothing overflows",
        async () => {
          const phone = await browser.context.newPage();
          await phone.setViewportSize({ width: 390, height: 844 });
          await phone.goto(engines[0].served.url);
          await phone.waitForSelector("#chat-notice:not([hidden])");
          assertMatch(
            (await phone.textContent("#chat-notice"))!,
            /^demo\/chat has RANDOM weights \(a generated demo model\)/,
          );
          // The gateway's page has the most in its header (the Dashboard tab too).
          await phone.goto(gw.url);
          await phone.waitForSelector("#tab-dashboard");
          const widths = await phone.evaluate(`({
            page: document.documentElement.scrollWidth,
            header: document.querySelector("header").scrollWidth,
            right: Math.max(...[...document.querySelectorAll("header *")]
              .map((n) => n.getBoundingClientRect().right)),
          })`) as { page: number; header: number; right: number };
          assert(
            widths.page <= 390 && widths.header <= 390 && widths.right <= 390,
            JSON.stringify(widths),
          );
          await phone.close();
        },
      );

      assertEquals(pageErrors, [], "no script errors or CSP violations on the page");
    } finally {
      await browser.close();
      await foreign.shutdown();
      await Promise.all([gw.stop(), keyed.stop()]);
      await state.close();
      await Promise.all(engines.map((e) => e.stop()));
      if (keep === undefined) await Deno.remove(shots, { recursive: true });
    }
  },
});
