/**
 * `deno bench` micro-benchmark of the gateway's wait queue: 4000 requests through a dispatcher
 * whose one backend takes 8 at a time and answers at once (no network), sent 100 at a time vs all
 * at once. With a queue whose cost per answer does not grow with its length the two take about
 * the same time; a queue rescanned on every answer makes "all at once" many times slower.
 *
 * Run: `deno bench bench/dispatcher_bench.ts`
 *
 * @module
 */

import { setupLogger } from "../src/core/logging.ts";
import { Dispatcher } from "../src/gateway/dispatcher.ts";
import type { BackendTransport } from "../src/gateway/transport.ts";

const REQUESTS = 4000;
const ANSWER = JSON.stringify({ id: "x", object: "chat.completion", choices: [] });
const BODY = { model: "m", messages: [{ role: "user", content: "hi" }] };

setupLogger("error");
const instant: BackendTransport = {
  kind: "in_process",
  send: () => Promise.resolve(Response.json(JSON.parse(ANSWER))),
  sendInit: () =>
    Promise.resolve(new Response(ANSWER, { headers: { "content-type": "application/json" } })),
};

async function run(atOnce: number): Promise<void> {
  const dispatcher = new Dispatcher({ policy: "fifo", maxQueue: REQUESTS });
  dispatcher.addBackend(
    { id: "b", baseUrl: "http://127.0.0.1:1/v1", kind: "llm", models: ["m"], maxConcurrency: 8 },
    { transport: instant },
  ).setHealth("healthy");
  const headers = new Headers();
  let answered = 0;
  for (let sent = 0; sent < REQUESTS; sent += atOnce) {
    await Promise.all(
      Array.from({ length: Math.min(atOnce, REQUESTS - sent) }, async () => {
        const res = await dispatcher.dispatch({ kind: "chat", model: "m", body: BODY, headers });
        await res.arrayBuffer();
        answered++;
      }),
    );
  }
  dispatcher.close();
  if (answered !== REQUESTS) throw new Error(`${answered} of ${REQUESTS} answered`);
}

// Async functions: deno bench awaits only what an async function returns.
Deno.bench(
  `${REQUESTS} requests, 8 slots: 100 at a time`,
  { group: "queue", baseline: true },
  async () => {
    await run(100);
  },
);
Deno.bench(`${REQUESTS} requests, 8 slots: all at once`, { group: "queue" }, async () => {
  await run(REQUESTS);
});
