// The management API over HTTP, as an admin with `key` calls it: a request and its JSON answer, and
// polling an engine until it reaches a state.
import type { GatewayServer } from "../../src/gateway/gateway_server.ts";

/** A JSON answer of the management API. */
export interface ManagementAnswer {
  status: number;
  json: Record<string, unknown>;
}

/** Calls of the management API of a gateway, with `key` as the bearer token. */
export function managementApi(key: string) {
  const call = async (
    gw: GatewayServer,
    method: string,
    path: string,
    body?: unknown,
  ): Promise<ManagementAnswer> => {
    const res = await fetch(`${gw.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, json: await res.json() };
  };
  const waitState = async (
    gw: GatewayServer,
    id: string,
    wanted: (engine: Record<string, unknown>) => boolean,
    timeoutMs = 30_000,
  ): Promise<Record<string, unknown>> => {
    const deadline = Date.now() + timeoutMs;
    while (true) {
      const { json } = await call(gw, "GET", `/v1/management/engines/${id}`);
      if (wanted(json)) return json;
      if (Date.now() > deadline) throw new Error(`engine ${id} stuck in ${JSON.stringify(json)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  return { call, waitState };
}
