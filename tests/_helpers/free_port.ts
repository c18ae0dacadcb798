// A loopback port free right now, for a child process that must be told its port in advance.
// (Another process could take it before the child binds; tests start their children at once.)

/** A port nothing listens on at this moment. */
export function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}
