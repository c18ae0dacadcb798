// An engine app with no models over a folder of stored responses (`svc llm run`'s store), served
// on a free loopback port, for tests that run it with permissions of their own (e.g. a
// `--deny-read` of one file). Prints its URL as the first line of stdout; stops when stdin closes.
import { createEngineApp } from "../../src/server/engine_app.ts";
import { setupLogger } from "../../src/core/logging.ts";

setupLogger("critical");
const server = Deno.serve({
  hostname: "127.0.0.1",
  port: 0,
  onListen: ({ port }) => console.log(`http://127.0.0.1:${port}`),
}, createEngineApp({ engines: [], responsesDir: Deno.args[0] }));
for await (const _ of Deno.stdin.readable);
await server.shutdown();
