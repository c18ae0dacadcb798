/**
 * The coordinator of several gateway replicas: a shared Redis (coordinator.ts). Every decision
 * that reads and then writes is one Lua script, so replicas never interleave inside it, and
 * every time is Redis' own clock (`TIME`), so replicas' clocks need not agree.
 *
 * @module
 */

import { createClient, ErrorReply } from "redis";
import { ConfigurationError, ServiceUnavailableError } from "../core/errors.ts";
import { withTimeout } from "../core/with_timeout.ts";
import { getLogger } from "../core/logging.ts";
import {
  COORDINATION_UNAVAILABLE,
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

/** KEYS[1]: a claim. ARGV: its holder's token. Deletes it only while that holder has it. */
const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`;

/**
 * How long one Redis command may take: past it the caller gets a 503 `coordination_unavailable`
 * (a Redis that hangs). While Redis is disconnected, commands fail at once (no offline queue).
 */
export const COMMAND_TIMEOUT_MS = 1_000;

/** Redis' answers that say it cannot serve now (rather than that a command is wrong). */
const UNAVAILABLE_REPLY = /^(LOADING|BUSY|MASTERDOWN|READONLY|TRYAGAIN|CLUSTERDOWN|OOM)\b/;

type Client = ReturnType<typeof createClient>;

/** Options of {@link RedisCoordinator.connect}. */
export interface RedisCoordinatorOptions {
  /** Prefix of every key (default `svc`). */
  prefix?: string;
  /** See {@link COMMAND_TIMEOUT_MS}. */
  commandTimeoutMs?: number;
}

/** Coordination through the Redis at `url` (`redis://[user:pass@]host:port[/db]`). */
export class RedisCoordinator implements Coordinator {
  readonly kind = "redis";
  #client: Client;
  #prefix: string;
  #host: string;
  #renewals = new Set<ReturnType<typeof setInterval>>();
  /** The token of each claim this coordinator holds (release deletes only its own). */
  #claims = new Map<string, string>();
  /** Why the last command failed, until one succeeds again. */
  #failure: string | null = null;
  #timeoutMs: number;

  private constructor(client: Client, prefix: string, host: string, timeoutMs: number) {
    this.#client = client;
    this.#prefix = prefix;
    this.#host = host;
    this.#timeoutMs = timeoutMs;
    client.on("ready", () => this.#succeeded());
  }

  /**
   * Connects; fails with a {@link ConfigurationError} (exit 78) naming the URL's host when Redis
   * cannot be reached now. Once connected it reconnects for as long as it takes; meanwhile every
   * command fails at once with a 503 (see {@link Coordinator.unavailable}).
   */
  static async connect(
    url: string,
    options: RedisCoordinatorOptions = {},
  ): Promise<RedisCoordinator> {
    const host = new URL(url).host;
    let connected = false;
    const timeoutMs = options.commandTimeoutMs ?? COMMAND_TIMEOUT_MS;
    const client: Client = createClient({
      url,
      disableOfflineQueue: true,
      commandOptions: { timeout: timeoutMs },
      socket: {
        connectTimeout: 5_000,
        // The first connect is not retried: a Redis unreachable at start is a setting to fix.
        reconnectStrategy: (retries) => connected && Math.min(retries * 100, 2_000),
      },
    });
    // node-redis reports connection errors as events; the commands fail on their own meanwhile.
    client.on("error", () => {});
    try {
      await client.connect();
      connected = true;
    } catch (err) {
      try {
        client.destroy();
      } catch { /* never opened */ }
      throw new ConfigurationError(
        `cannot reach the coordination Redis at ${host}: ${(err as Error).message}; check that ` +
          "redis-server runs there and that --coord (or SVC_COORD_URL) names it",
        { code: COORDINATION_UNAVAILABLE, param: "coord", cause: err },
      );
    }
    return new RedisCoordinator(client, options.prefix ?? "svc", host, timeoutMs);
  }

  unavailable(): string | null {
    if (!this.#client.isReady) {
      return `The gateway cannot reach its coordination Redis at ${this.#host} (reconnecting).`;
    }
    return this.#failure;
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
        await this.#run(() => this.#client.zRem(set, holder));
      },
    };
  }

  async claim(name: string, ttlMs: number): Promise<boolean> {
    const token = crypto.randomUUID();
    const key = this.#key("claim", name);
    const set = await this.#run(() => this.#client.set(key, token, { NX: true, PX: ms(ttlMs) }));
    if (set !== "OK") return false;
    this.#claims.set(name, token);
    return true;
  }

  /** Gives up this coordinator's claim of `name`; a claim that expired and went to another is left. */
  async release(name: string): Promise<void> {
    const token = this.#claims.get(name);
    if (token === undefined) return;
    this.#claims.delete(name);
    await this.#eval(RELEASE, [this.#key("claim", name)], [token]);
  }

  async put(name: string, value: string, ttlMs: number): Promise<void> {
    await this.#run(() => this.#client.set(this.#key("value", name), value, { PX: ms(ttlMs) }));
  }

  get(name: string): Promise<string | null> {
    return this.#run(() => this.#client.get(this.#key("value", name)));
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
    // A Redis that is down or hangs would hold a graceful close (it waits for replies): drop it.
    if (!this.#client.isReady) return void this.#client.destroy();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const gaveUp = new Promise<boolean>((r) => timer = setTimeout(() => r(true), this.#timeoutMs));
    const closed = this.#client.close().then(() => false, () => false);
    if (await Promise.race([closed, gaveUp])) this.#client.destroy();
    clearTimeout(timer);
  }

  #key(...parts: string[]): string {
    return [this.#prefix, ...parts].join(":");
  }

  #eval(script: string, keys: string[], args: (string | number)[]): Promise<unknown> {
    return this.#run(() => this.#client.eval(script, { keys, arguments: args.map(String) }));
  }

  /**
   * Runs one command; a failure to reach Redis (disconnected, timed out, or Redis saying it cannot
   * serve) becomes a 503 `coordination_unavailable` with Retry-After, and is remembered for
   * {@link unavailable} until a command succeeds.
   */
  async #run<T>(command: () => Promise<T>): Promise<T> {
    let result: T;
    try {
      // node-redis' own timeout ends once a command is written: a Redis that stops answering
      // would hold it for ever. The late answer (or error) of a command given up is ignored.
      result = await withTimeout(
        command(),
        this.#timeoutMs,
        () => new Error(`no answer within ${this.#timeoutMs} ms`),
      );
    } catch (err) {
      if (err instanceof ErrorReply && !UNAVAILABLE_REPLY.test(err.message)) throw err;
      const why = (err as Error).message || (err as Error).name;
      if (this.#failure === null) {
        getLogger("coord").warn("the coordination Redis cannot be reached", {
          host: this.#host,
          error: why,
        });
      }
      this.#failure = `The gateway cannot reach its coordination Redis at ${this.#host}: ${why}.`;
      throw new ServiceUnavailableError(
        `${this.#failure} Retry shortly; the gateway's admin should check that Redis runs.`,
        { code: COORDINATION_UNAVAILABLE, retryAfterSeconds: 1, cause: err },
      );
    }
    this.#succeeded();
    return result;
  }

  #succeeded(): void {
    if (this.#failure === null) return;
    this.#failure = null;
    getLogger("coord").info("the coordination Redis is reachable again", { host: this.#host });
  }
}

/** Redis takes whole milliseconds, at least 1. */
function ms(value: number): number {
  return Math.max(1, Math.ceil(value));
}
