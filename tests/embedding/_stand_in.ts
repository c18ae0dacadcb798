/**
 * A local stand-in for a remote embedding service: Deno.serve on 127.0.0.1, port 0. It records
 * every request (raw path, headers, body) and answers with the test's handler.
 */

/** One request the stand-in received. */
export interface ReceivedRequest {
  method: string;
  /** Path exactly as sent (percent-encoding kept). */
  path: string;
  headers: Headers;
  body: string;
  // deno-lint-ignore no-explicit-any
  json: any;
}

/** A running stand-in. */
export interface StandIn {
  /** `http://127.0.0.1:<port>` */
  url: string;
  requests: ReceivedRequest[];
  close(): Promise<void>;
}

/** Starts a stand-in answering with `handler`. */
export function startStandIn(
  handler: (request: ReceivedRequest) => Response | Promise<Response>,
): StandIn {
  const requests: ReceivedRequest[] = [];
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (req) => {
      const body = await req.text();
      let json: unknown = undefined;
      try {
        json = JSON.parse(body);
      } catch {
        // not JSON: the handler decides
      }
      const received: ReceivedRequest = {
        method: req.method,
        path: new URL(req.url).pathname,
        headers: req.headers,
        body,
        json,
      };
      requests.push(received);
      return await handler(received);
    },
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    requests,
    close: () => server.shutdown(),
  };
}

/** A JSON response. */
export function jsonResponse(body: unknown, status = 200, headers: HeadersInit = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json", ...headers },
  });
}

/** A vector that encodes `text` and `size`, so tests can tell which input it belongs to. */
export function fakeVector(text: string, size: number): number[] {
  return Array.from({ length: size }, (_, i) => (text.length + i) / 100);
}
