// Attack: chunked uploads that start and never finish, more of them than the gateway's in-flight
// limit. Before, each held an in-flight slot while its body trickled in, so the rest of the
// world got 503 gateway_overloaded; now the body is read before a slot is taken and the body
// timeout ends them with 408.
import { RawClient } from "../http/http1/_raw_client.ts";
import { startServedStack, timeNormalChat } from "../_helpers/served_stack.ts";
import { waitFor } from "../_helpers/wait.ts";
import { assert, assertEquals } from "../_assert.ts";

const MAX_IN_FLIGHT = 8;
const STALLED = 24;
const BODY_TIMEOUT_MS = 3000;

Deno.test("stalled uploads: normal requests are answered while they hang, and they get 408", async () => {
  const stack = await startServedStack([
    "--max-in-flight",
    String(MAX_IN_FLIGHT),
    "--body-timeout-ms",
    String(BODY_TIMEOUT_MS),
  ]);
  const stalled: RawClient[] = [];
  try {
    const gatewayUrl = stack.state.gatewayUrl!;
    for (let i = 0; i < STALLED; i++) {
      const c = await RawClient.open(gatewayUrl);
      await c.send(
        "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" +
          'Transfer-Encoding: chunked\r\n\r\n9\r\n{"model":\r\n',
      );
      stalled.push(c);
    }
    // Three times the in-flight limit hang; a normal request still goes through.
    await timeNormalChat(gatewayUrl);
    assert(stalled.every((c) => c.text === ""), "the stalled uploads are still waiting");
    await waitFor(() => stalled.every((c) => c.closed), {
      timeoutMs: BODY_TIMEOUT_MS + 20_000,
      what: "every stalled upload answered and closed",
    });
    for (const c of stalled) {
      assert(c.text.startsWith("HTTP/1.1 408 "), c.text.slice(0, 200));
      const body = JSON.parse(c.text.slice(c.text.indexOf("\r\n\r\n") + 4));
      assertEquals(body.error.code, "body_timeout");
    }
    const ms = await timeNormalChat(gatewayUrl);
    assert(ms < 1000, `a normal chat took ${ms.toFixed(0)} ms after the attack`);
  } finally {
    for (const c of stalled) await c.close();
    await stack.stop();
  }
});
