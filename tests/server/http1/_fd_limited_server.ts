// A minimal served app for the file-descriptor exhaustion test: run with a low `ulimit -n`; it
// prints its URL and serves until killed.
import { serveApp } from "../../../src/server/serve.ts";

const server = serveApp(() => Promise.resolve(Response.json({ status: "ok" })), {
  logger: { error: (m) => console.error(m), warn: (m) => console.error(m) },
});
console.log(server.url);
