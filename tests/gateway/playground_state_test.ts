// The playground page's own state in a real browser (Debian's chromium via playwright-core),
// against a real gateway over a fake backend whose answers stream slowly:
// - "Clear" while an answer streams starts a new conversation that the cut answer does not join
//   (it was added to the new conversation's history and sent with its first question);
// - switching tabs while a dashboard refresh is in flight keeps one polling loop (each switch
//   used to start one more, each polling every 2 s for as long as the page stayed open);
// - a page opened while no backend is healthy lists the model once one is, without a reload (it
//   used to keep "No chat model" until reloaded).
import type { Page } from "playwright-core";
import { assert, assertEquals } from "../_assert.ts";
import { setupLogger } from "../../src/core/logging.ts";
import { startGateway } from "../../src/gateway/gateway_server.ts";
import type { HttpLogger } from "../../src/http/logger.ts";
import { CHROMIUM_MISSING, launchBrowser } from "../_helpers/browser.ts";
import { FakeEngine } from "./_fake_backend.ts";

setupLogger("error");
const QUIET: HttpLogger = { error: () => {}, warn: () => {} };

// Waits until the assistant's answer on screen contains `text`.
async function answerShows(page: Page, text: string): Promise<void> {
  await page.locator("#chat-log .message.assistant .content", { hasText: text }).waitFor();
}

Deno.test({
  name: "playground: Clear during an answer starts afresh; tab switches keep one dashboard poll",
  ignore: CHROMIUM_MISSING !== null,
  // playwright-core talks to chromium through node:child_process pipes it keeps between calls.
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async (t) => {
    // 40 chunks, 100 ms apart: an answer takes 4 s, plenty of time to clear it mid-way.
    const engine = new FakeEngine("slow", { chunks: 40, chunkDelayMs: 100 });
    const gw = await startGateway({
      logger: QUIET,
      // One probe, which cannot time out: this test is about the page, not about health checks.
      health: { intervalMs: 600_000, timeoutMs: 600_000 },
      backends: [{ id: "slow", baseUrl: engine.serve(), kind: "llm", models: ["m"] }],
    });
    // Down when the page opens: the gateway lists no model until a probe finds it up.
    const late = new FakeEngine("late", { healthStatus: 503 });
    const lateGw = await startGateway({
      logger: QUIET,
      health: { intervalMs: 100, timeoutMs: 600_000 },
      backends: [{ id: "late", baseUrl: late.serve(), kind: "llm", models: ["late-model"] }],
    });
    const browser = await launchBrowser();
    try {
      const page = await browser.context.newPage();
      const pageErrors: string[] = [];
      page.on("pageerror", (e) => pageErrors.push(e.message));
      await page.goto(gw.url);
      await page.waitForSelector("#chat-model option[value='m']", { state: "attached" });

      await t.step("Clear while an answer streams: the next question starts afresh", async () => {
        const sent: { messages: { role: string; content: string }[] }[] = [];
        page.on(
          "request",
          (r) => r.url().endsWith("/v1/chat/completions") && sent.push(r.postDataJSON()),
        );
        await page.fill("#chat-input", "first question");
        await page.press("#chat-input", "Enter");
        // Part of the answer is on screen: it is streaming.
        await answerShows(page, "slow-1");
        await page.click("#chat-clear");
        // The cut answer's handler has run once Send is enabled again.
        await page.waitForSelector("#chat-send:not([disabled])");
        assertEquals(await page.locator("#chat-log .message").count(), 0);
        await page.fill("#chat-input", "second question");
        await page.press("#chat-input", "Enter");
        await answerShows(page, "slow-0");
        await page.click("#chat-stop");
        assertEquals(sent.length, 2);
        assertEquals(sent[1].messages, [{ role: "user", content: "second question" }]);
        // The status is the new conversation's ("Stopped." of its own answer), not an old one's.
        await page.locator("#chat-status", { hasText: /^Stopped\.$/ }).waitFor();
      });

      await t.step(
        "tab switches during a slow dashboard refresh keep one polling loop",
        async () => {
          // Each dashboard answer takes 1.5 s (the poll waits 2 s after one before the next).
          await page.route("**/v1/management/dashboard", async (route) => {
            await new Promise((r) => setTimeout(r, 1500));
            await route.continue().catch(() => {});
          });
          await page.click("#tab-dashboard");
          for (let i = 0; i < 5; i++) {
            await page.waitForTimeout(150);
            await page.click("#tab-chat");
            await page.click("#tab-dashboard");
          }
          // Let the refreshes started by the switches settle, then count for 7 s: one loop makes a
          // request every 3.5 s (2 or 3 in the window); six loops made about 12.
          await page.waitForTimeout(2000);
          let requests = 0;
          const count = (r: { url(): string }) => {
            if (r.url().endsWith("/v1/management/dashboard")) requests++;
          };
          page.on("request", count);
          await page.waitForTimeout(7000);
          page.off("request", count);
          assert(requests >= 1 && requests <= 3, `${requests} dashboard requests in 7 s`);
          await page.click("#tab-chat");
        },
      );

      await t.step(
        "a model that comes up after the page opened is listed without a reload",
        async () => {
          const early = await browser.context.newPage();
          await early.goto(lateGw.url);
          await early.locator("#chat-model option", { hasText: "No chat model" }).waitFor({
            state: "attached",
          });
          late.behavior.healthStatus = 200;
          await early.waitForSelector("#chat-model option[value='late-model']", {
            state: "attached",
          });
          assertEquals(await early.isDisabled("#chat-model"), false);
          await early.close();
        },
      );
      assertEquals(pageErrors, []);
    } finally {
      await browser.close();
      await gw.stop();
      await lateGw.stop();
      await engine.close();
      await late.close();
    }
  },
});
