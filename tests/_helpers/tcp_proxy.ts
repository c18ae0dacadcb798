// A loopback TCP proxy to a server, for outage tests: `cut()` closes the listener and every
// connection through it (the server looks down: refused), `restore()` listens on the same port
// again. The server itself keeps running, so other tests sharing it are not disturbed.
import { freePort } from "./free_port.ts";

/** A running proxy. */
export interface TcpProxy {
  /** The proxy's port (connect here instead of the server's). */
  port: number;
  /** Closes the listener and every connection: new connections are refused. */
  cut(): Promise<void>;
  /** Listens again on the same port. */
  restore(): void;
  /** Stops it for good. */
  stop(): Promise<void>;
}

/** Proxies 127.0.0.1:<new port> to 127.0.0.1:`target`. */
export function startTcpProxy(target: number): TcpProxy {
  const port = freePort();
  const open = new Set<Deno.Conn>();
  const pumps = new Set<Promise<void>>();
  let listener: Deno.Listener | undefined;
  let accepting: Promise<void> | undefined;

  const pump = async (from: Deno.Conn, to: Deno.Conn) => {
    try {
      await from.readable.pipeTo(to.writable);
    } catch { /* either side closed */ }
    for (const c of [from, to]) {
      try {
        c.close();
      } catch { /* already closed */ }
      open.delete(c);
    }
  };
  const serve = async (l: Deno.Listener) => {
    for await (const client of l) {
      let server: Deno.Conn;
      try {
        server = await Deno.connect({ hostname: "127.0.0.1", port: target });
      } catch {
        client.close();
        continue;
      }
      open.add(client);
      open.add(server);
      for (const p of [pump(client, server), pump(server, client)]) {
        pumps.add(p);
        p.finally(() => pumps.delete(p));
      }
    }
  };
  const restore = () => {
    listener = Deno.listen({ hostname: "127.0.0.1", port });
    accepting = serve(listener).catch(() => {});
  };
  const cut = async () => {
    listener?.close();
    listener = undefined;
    await accepting;
    for (const c of open) {
      try {
        c.close();
      } catch { /* already closed */ }
    }
    open.clear();
    await Promise.all(pumps);
  };
  restore();
  return { port, cut, restore, stop: cut };
}
