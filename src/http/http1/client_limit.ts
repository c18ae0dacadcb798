/**
 * The per-client connection cap (`maxConnectionsPerClient`, like nginx's `limit_conn`): open
 * connections are counted per peer address, so one client holding sockets open (slowloris)
 * cannot take every slot of the server's `maxConnections` from everyone else.
 *
 * @module
 */
import { isLoopbackHost } from "../../core/loopback.ts";

/**
 * The client a peer address counts as: an IPv4 address as is (IPv4-mapped IPv6 too), an IPv6
 * address by its /64 prefix, since one host is usually given a whole /64 and could rotate
 * addresses inside it.
 *
 * @example
 * ```ts
 * import { clientKey } from "./client_limit.ts";
 * clientKey("::ffff:203.0.113.7"); // "203.0.113.7"
 * clientKey("2001:db8:1:2::5"); // "2001:db8:1:2::/64"
 * ```
 */
export function clientKey(hostname: string): string {
  const host = hostname.replace(/^\[|\]$/g, "").replace(/%.*$/, "").toLowerCase();
  if (!host.includes(":")) return host;
  const groups = ipv6Groups(host);
  if (groups === undefined) return host; // not an address we know: counted as written
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return [groups[6] >> 8, groups[6] & 0xff, groups[7] >> 8, groups[7] & 0xff].join(".");
  }
  return `${groups.slice(0, 4).map((g) => g.toString(16)).join(":")}::/64`;
}

// The eight 16-bit groups of an IPv6 address (with `::` and a trailing dotted IPv4 expanded).
function ipv6Groups(host: string): number[] | undefined {
  let text = host;
  const v4 = /(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text);
  if (v4) {
    const [a, b, c, d] = v4.slice(1).map(Number);
    const high = ((a << 8) | b).toString(16);
    const low = ((c << 8) | d).toString(16);
    text = `${text.slice(0, v4.index)}${high}:${low}`;
  }
  const halves = text.split("::");
  if (halves.length > 2) return undefined;
  const parse = (s: string) => (s === "" ? [] : s.split(":").map((g) => parseInt(g, 16)));
  const head = parse(halves[0]);
  const tail = halves.length === 2 ? parse(halves[1]) : [];
  const missing = 8 - head.length - tail.length;
  if (missing < 0 || (halves.length === 1 && missing !== 0)) return undefined;
  const groups = [...head, ...Array(halves.length === 2 ? missing : 0).fill(0), ...tail];
  return groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : undefined;
}

/**
 * Open connections per client, with a cap. Loopback peers are exempt unless `capLoopback`: a
 * local reverse proxy, and the gateway in front of its engines, are one loopback address for
 * many clients, so a cap there would be a cap on everyone (limit those clients at the proxy).
 *
 * @example
 * ```ts
 * import { ClientConnections } from "./client_limit.ts";
 * const clients = new ClientConnections(1);
 * const release = clients.admit("203.0.113.7"); // a function: admitted
 * clients.admit("203.0.113.7"); // undefined: over the cap
 * release?.();
 * ```
 */
export class ClientConnections {
  readonly #max: number;
  readonly #capLoopback: boolean;
  // Only clients with open connections have an entry, so this never outgrows the connections.
  readonly #open = new Map<string, number>();

  constructor(max: number, options: { capLoopback?: boolean } = {}) {
    this.#max = max;
    this.#capLoopback = options.capLoopback ?? false;
  }

  /**
   * Counts a new connection from `hostname`; undefined when its client already has the most.
   * The function returned counts it out; calling it again does nothing, so a connection that
   * ends in several ways at once is still counted out once.
   */
  admit(hostname: string): (() => void) | undefined {
    if (!this.#capLoopback && isLoopbackHost(hostname)) return () => {};
    const key = clientKey(hostname);
    const open = this.#open.get(key) ?? 0;
    if (open >= this.#max) return undefined;
    this.#open.set(key, open + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.#open.get(key) ?? 1) - 1;
      if (left > 0) this.#open.set(key, left);
      else this.#open.delete(key);
    };
  }

  /** Open connections counted for `hostname`'s client (0 for an exempt one). */
  count(hostname: string): number {
    return this.#open.get(clientKey(hostname)) ?? 0;
  }
}
