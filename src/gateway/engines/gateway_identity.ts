/**
 * A gateway's identity in a state store shared with gateways on other hosts: the rows of the
 * engines it starts carry it, so that on start it restarts its own engines and never another
 * gateway's (which run on another host, on that host's loopback).
 *
 * @module
 */
import { hostname } from "node:os";
import { join } from "node:path";
import { writeFileAtomic } from "../../core/atomic_file.ts";

/** The file in SVC_HOME that keeps the identity. */
export const GATEWAY_ID_FILE = "gateway_id";

const ID_PATTERN = /^[A-Za-z0-9._:-]{1,100}$/;

/**
 * The identity of the gateway that runs with `home` as its SVC_HOME: read from
 * `<home>/gateway_id`, or made up (`<hostname>-<8 hex digits>`) and written there the first time.
 * Kept in the home rather than taken from the hostname, so a container started again with the
 * same home volume (and a new hostname) is still the same gateway.
 *
 * @example
 * ```ts
 * import { gatewayIdentity } from "./gateway_identity.ts";
 * const home = await Deno.makeTempDir();
 * const id = await gatewayIdentity(home);
 * console.log(id === await gatewayIdentity(home)); // true
 * ```
 */
export async function gatewayIdentity(home: string): Promise<string> {
  const file = join(home, GATEWAY_ID_FILE);
  try {
    const id = (await Deno.readTextFile(file)).trim();
    if (ID_PATTERN.test(id)) return id;
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
  const host = hostname().replace(/[^A-Za-z0-9._-]/g, "").slice(0, 60) || "gateway";
  const id = `${host}-${crypto.randomUUID().slice(0, 8)}`;
  await writeFileAtomic(file, `${id}\n`, { createDir: true });
  return id;
}
