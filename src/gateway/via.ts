/**
 * Loops between gateways, found with HTTP's `Via` header (RFC 9110 §7.6.3): each gateway adds its
 * own pseudonym to what it sends upstream, keeping the chain it received, and refuses a request
 * that already passed through it. A backend registered with the gateway's own address (or a
 * cycle of gateways) is then an error at once, instead of requests that wait for one another's
 * slots until every one of them is held.
 *
 * @module
 */
import { ConfigurationError } from "../core/errors.ts";

/** A pseudonym for one gateway, unique to it. */
export function newViaName(): string {
  return `svc-${crypto.randomUUID().slice(0, 8)}`;
}

/**
 * Throws a `loop_detected` ConfigurationError (500) when the received `Via` chain names `name`; else returns the
 * chain to send upstream: the received one and this gateway.
 */
export function viaUpstream(received: string | null, name: string): string {
  // Entries are `protocol pseudonym [comment]`, comma-separated.
  const names = (received ?? "").split(",").map((entry) => entry.trim().split(/\s+/)[1]);
  if (names.includes(name)) {
    throw new ConfigurationError(
      "This request came back to the gateway that sent it (a backend's address leads back to " +
        "this gateway): check the backends' base_url.",
      { code: "loop_detected" },
    );
  }
  return received === null || received.trim() === "" ? `1.1 ${name}` : `${received}, 1.1 ${name}`;
}
