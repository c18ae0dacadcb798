/**
 * The coordinator a `--coord` URL (or `SVC_COORD_URL`) names: none is this process alone,
 * `redis://` / `rediss://` a shared Redis.
 *
 * @module
 */

import { ConfigurationError } from "../core/errors.ts";
import type { Coordinator } from "./coordinator.ts";
import { LocalCoordinator } from "./local_coordinator.ts";
import { RedisCoordinator } from "./redis_coordinator.ts";

/** Opens the coordinator of `url` (undefined or empty: in-process). */
export async function openCoordinator(url?: string): Promise<Coordinator> {
  if (!url) return new LocalCoordinator();
  let scheme: string;
  try {
    scheme = new URL(url).protocol;
  } catch {
    throw new ConfigurationError(`--coord '${url}' is not a URL: use redis://host:port`, {
      param: "coord",
    });
  }
  if (scheme === "redis:" || scheme === "rediss:") return await RedisCoordinator.connect(url);
  throw new ConfigurationError(
    `--coord '${url}': only redis:// (or rediss://) is supported; leave it unset for one process`,
    { param: "coord" },
  );
}
