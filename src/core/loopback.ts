/**
 * The one answer to "is this address this machine's loopback?", for URLs and for bare host names
 * or peer addresses.
 *
 * Loopback here means what every OS routes to itself without touching a network: 127.0.0.0/8,
 * `::1`, IPv4-mapped `::ffff:127.x.y.z`, and the names `localhost` and `*.localhost`, which RFC 6761
 * reserves for loopback. `0.0.0.0` is not loopback: it is the unspecified address a server listens
 * on; connecting to it reaches this machine on Linux and macOS but fails on Windows, and browsers
 * block pages from reaching it, so a guard that let it through would be wrong on one of them.
 *
 * @module
 */

// 127.0.0.0/8 as written by a peer address (dotted) or by WHATWG URL, which prints an IPv4-mapped
// IPv6 address in hex: [::ffff:127.0.0.1] becomes [::ffff:7f00:1].
const LOOPBACK_V4 = /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/;
const MAPPED_V4 = /^::ffff:(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|7f[0-9a-f]{2}:[0-9a-f]{1,4})$/;

/**
 * True when `host` (a host name, an IP address, or a URL's bracketed IPv6 `hostname`) is this
 * machine's loopback.
 *
 * @example
 * ```ts
 * import { isLoopbackHost } from "./loopback.ts";
 * isLoopbackHost("127.0.0.1"); // true
 * isLoopbackHost("[::1]"); // true
 * isLoopbackHost("0.0.0.0"); // false
 * ```
 */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, "").toLowerCase();
  return h === "localhost" || h.endsWith(".localhost") || h === "::1" ||
    LOOPBACK_V4.test(h) || MAPPED_V4.test(h);
}

/**
 * True when the URL's host is this machine's loopback (see {@link isLoopbackHost}); false for a
 * string that is not a URL.
 *
 * @example
 * ```ts
 * import { isLoopbackUrl } from "./loopback.ts";
 * isLoopbackUrl("http://127.0.0.1:8001/v1"); // true
 * isLoopbackUrl("https://api.openai.com/v1"); // false
 * ```
 */
export function isLoopbackUrl(url: string): boolean {
  let hostname: string;
  try {
    hostname = new URL(url).hostname;
  } catch {
    return false;
  }
  return isLoopbackHost(hostname);
}
