/**
 * The coordinator of several gateway replicas: a shared Redis (coordinator.ts). Every decision
 * that reads and then writes is one Lua script, so replicas never interleave inside it, and
 * every time is Redis' own clock (`TIME`), so replicas' clocks need not agree.
 *
 * @module
 */

import { createClient } from "redis";
import { ServiceUnavailableError } from "../core/errors.ts";
import {
  type Coordinator,
  decide,
  DEFAULT_SLOT_TTL_MS,
  type Lease,
  RATE_WINDOW_MS,
  type RateDecision,
  type RateLimit,
} from "./coordinator.ts";

/** Redis' clock in ms, and the window keys of KEYS[1] (a key's prefix) at that time. */
const CLOCK = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window = math.floor(now / ${RATE_WINDOW_MS})
local reset = (window + 1) * ${RATE_WINDOW_MS} - now
local requests = KEYS[1] .. ':r:' .. window
local tokens = KEYS[1] .. ':t:' .. window
`;

/** ARGV: rpm, tpm (-1: none). Returns allowed (0/1), requests before, tokens, ms to reset. */
const ADMIT = `${CLOCK}
local r = tonumber(redis.call('GET', requests) or '0')
local k = tonumber(redis.call('GET', tokens) or '0')
local rpm, tpm = tonumber(ARGV[1]), tonumber(ARGV[2])
if (rpm >= 0 and r >= rpm) or (tpm >= 0 and k >= tpm) then return {0, r, k, reset} end
redis.call('INCR', requests)
redis.call('PEXPIRE', requests, ${RATE_WINDOW_MS * 2})
return {1, r, k, reset}`;

/** ARGV: tokens. */
const CHARGE = `${CLOCK}
redis.call('INCRBY', tokens, ARGV[1])
redis.call('PEXPIRE', tokens, ${RATE_WINDOW_MS * 2})
return 1`;

/** KEYS[1]: the slots' sorted set (score: expiry). ARGV: max, ttl, holder. */
const ACQUIRE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]))
return 1`;

/** KEYS[1]: a sorted set of expiring members. ARGV: ttl, member, XX or NX mode ('XX'/''). */
const RENEW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if ARGV[3] == 'XX' then
  redis.call('ZADD', KEYS[1], 'XX', now + tonumber(ARGV[1]), ARGV[2])
else
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[1]), ARGV[2])
end
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[1]) then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return 1`;

/** KEYS[1]: a sorted set of expiring members. Returns the live ones. */
const LIVE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
return redis.call('ZRANGE', KEYS[1], 0, -1)`;

type Client = ReturnType<typeof createClient>;

/** Coordination through the Redis at `url` (`redis://[user:pass@]host:port[/db]`). */
export class RedisCoordinator implements Coordinator {
  readonly kind = "redis";
  #client: Client;
  #prefix: string;
  #renewals = new Set<ReturnType<typeof setInterval>>();

  private constructor(client: Client, prefix: string) {
    this.#client = client;
    this.#prefix = prefix;
  }

  /** Connects; fails with a 503-class error naming the URL's host when Redis cannot be reached. */
  static async connect(url: string, prefix = "svc"): Promise<RedisCoordinator> {
    const client: Client = createClient({
      url,
      socket: {
        connectTimeout: 5_000,
        reconnectStrategy: (retries) => Math.min(retries * 100, 2_000),
      },
    });
    // node-redis reports connection errors as events; the commands fail on their own meanwhile.
    client.on("error", () => {});
    try {
      await client.connect();
    } catch (err) {
      throw new ServiceUnavailableError(
        `cannot reach the coordination Redis at ${new URL(url).host}: ${(err as Error).message}`,
      );
    }
    return new RedisCoordinator(client, prefix);
  }

  async admit(key: string, limit: RateLimit): Promise<RateDecision> {
    const [allowed, requests, tokens, reset] = await this.#eval(ADMIT, [this.#key("rate", key)], [
      limit.rpm ?? -1,
      limit.tpm ?? -1,
    ]) as number[];
    const decision = decide(limit, { requests, tokens }, reset);
    // The script decided; `decide` only shapes the answer and must agree with it.
    return { ...decision, allowed: allowed === 1 };
  }

  async charge(key: string, tokens: number): Promise<void> {
    if (tokens > 0) await this.#eval(CHARGE, [this.#key("rate", key)], [Math.round(tokens)]);
  }

  async acquire(resource: string, max: number, ttlMs = DEFAULT_SLOT_TTL_MS): Promise<Lease | null> {
    const set = this.#key("slots", resource);
    const holder = crypto.randomUUID();
    if (await this.#eval(ACQUIRE, [set], [max, ms(ttlMs), holder]) !== 1) return null;
    // Renewed while held, so long streams keep their slot; a dead holder's slot expires.
    const timer = setInterval(() => {
      this.#eval(RENEW, [set], [ms(ttlMs), holder, "XX"]).catch(() => {});
    }, ttlMs / 3);
    Deno.unrefTimer(timer);
    this.#renewals.add(timer);
    let released = false;
    return {
      release: async () => {
        if (released) return;
        released = true;
        clearInterval(timer);
        this.#renewals.delete(timer);
        await this.#client.zRem(set, holder);
      },
    };
  }

  async claim(name: string, ttlMs: number): Promise<boolean> {
    const set = await this.#client.set(this.#key("claim", name), "1", { NX: true, PX: ms(ttlMs) });
    return set === "OK";
  }

  async release(name: string): Promise<void> {
    await this.#client.del(this.#key("claim", name));
  }

  async put(name: string, value: string, ttlMs: number): Promise<void> {
    await this.#client.set(this.#key("value", name), value, { PX: ms(ttlMs) });
  }

  get(name: string): Promise<string | null> {
    return this.#client.get(this.#key("value", name));
  }

  async heartbeat(id: string, ttlMs: number): Promise<void> {
    await this.#eval(RENEW, [this.#key("members")], [ms(ttlMs), id, ""]);
  }

  async members(): Promise<string[]> {
    return await this.#eval(LIVE, [this.#key("members")], []) as string[];
  }

  async close(): Promise<void> {
    for (const timer of this.#renewals) clearInterval(timer);
    this.#renewals.clear();
    await this.#client.close();
  }

  #key(...parts: string[]): string {
    return [this.#prefix, ...parts].join(":");
  }

  #eval(script: string, keys: string[], args: (string | number)[]): Promise<unknown> {
    return this.#client.eval(script, { keys, arguments: args.map(String) });
  }
}

/** Redis takes whole milliseconds, at least 1. */
function ms(value: number): number {
  return Math.max(1, Math.ceil(value));
}
