// Preloaded (`deno run --preload`, see runCli's `emptyDefaultPorts`) into CLI subprocesses whose
// result must not depend on what else runs on this machine: a connection to this host on one of
// Svc's default ports (gateway 8000, engines 8001 and 8901, embeddings 8090) is refused as if
// nothing listened there, whoever does listen. Every other address goes through untouched, so
// the CLI still searches its real candidate list, in its real order.
import { SvcPorts } from "../../src/config/ports.ts";

const DEFAULT_PORTS = new Set<number>([
  SvcPorts.GATEWAY_DEFAULT,
  SvcPorts.LLM_DEFAULT,
  SvcPorts.LLM_WSL_FALLBACK,
  SvcPorts.EMBEDDING_DEFAULT,
]);
const THIS_HOST = new Set(["127.0.0.1", "localhost", "[::1]", "0.0.0.0"]);

const realFetch = globalThis.fetch;
globalThis.fetch = (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
  const url = new URL(input instanceof Request ? input.url : input);
  const port = Number(url.port || (url.protocol === "https:" ? 443 : 80));
  if (THIS_HOST.has(url.hostname) && DEFAULT_PORTS.has(port)) {
    // What fetch throws when nothing listens there.
    return Promise.reject(
      new TypeError(
        `error sending request for url (${url.href}): client error (Connect): tcp connect ` +
          `error: Connection refused (os error 111)`,
      ),
    );
  }
  return realFetch(input, init);
};
