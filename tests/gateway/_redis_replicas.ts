// Gateway replicas that share a real Redis coordinator (each its own client), for the tests of
// what replicas share; `redisBinary` is null where redis-server is missing (tests then ignored).
import { RedisCoordinator } from "../../src/coord/redis_coordinator.ts";
import {
  type GatewayServer,
  type GatewayServerOptions,
  startGateway,
} from "../../src/gateway/gateway_server.ts";
import type { HttpLogger } from "../../src/http/logger.ts";
import { findRedisServer, type RedisServer, startRedis } from "../_helpers/redis_server.ts";

/** The redis-server binary, or null. */
export const redisBinary: string | null = findRedisServer();

const QUIET: HttpLogger = { error: () => {}, warn: () => {} };

/** Running replicas. */
export interface RedisReplicas {
  gateways: GatewayServer[];
  /** Stops the gateways, their clients and Redis. */
  stop(): Promise<void>;
}

/** Starts Redis and `count` gateways with `options`, each with its own Redis client. */
export async function startRedisReplicas(
  count: number,
  options: GatewayServerOptions,
): Promise<RedisReplicas> {
  const redis: RedisServer = await startRedis(redisBinary!);
  const coordinators: RedisCoordinator[] = [];
  const gateways: GatewayServer[] = [];
  const stop = async () => {
    for (const g of gateways) await g.stop();
    for (const c of coordinators) await c.close();
    await redis.stop();
  };
  try {
    for (let i = 0; i < count; i++) {
      const coordinator = await RedisCoordinator.connect(redis.url);
      coordinators.push(coordinator);
      gateways.push(await startGateway({ logger: QUIET, ...options, coordinator }));
    }
  } catch (err) {
    await stop();
    throw err;
  }
  return { gateways, stop };
}
