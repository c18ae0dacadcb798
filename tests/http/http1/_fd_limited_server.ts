// A minimal served app for the file-descriptor exhaustion test: run with a low `ulimit -n`; it
// prints its URL and serves until SIGTERM, which it waits for as `svc llm run` does (the listener
// is registered at start: Deno 2.9 panics registering one while no descriptor is free).
import { serveApp } from "../../../src/http/serve.ts";
import { untilShutdownSignal } from "../../../src/cli/signals.ts";

const server = serveApp(() => Promise.resolve(Response.json({ status: "ok" })), {
  logger: { error: (m) => console.error(m), warn: (m) => console.error(m) },
});
console.log(server.url);
await untilShutdownSignal();
await server.shutdown();
Deno.exit(143);
