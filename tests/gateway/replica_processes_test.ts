// Several replicas as they are deployed: three `svc llm gateway` processes on one PostgreSQL
// (state) and one Redis (coordination), a real demo/chat engine (`svc llm run`) and a slow engine
// registered at run time, and a small round-robin load balancer in front. Any replica serves any
// request: a registration is seen everywhere, a Responses chain continues on any replica, also
// after the replica that started it is killed; a revoked key is refused everywhere; a key's rpm
// and a backend's max_concurrency hold across replicas; a replica started later serves what is
// there; each replica lists the live ones. Ignored where PostgreSQL or Redis is missing (CI
// installs both).
import { assert, assertEquals } from "../_assert.ts";
import { freshPostgresUrl, POSTGRES_MISSING } from "../state/_postgres.ts";
import { findRedisServer, type RedisServer, startRedis } from "../_helpers/redis_server.ts";
import { svcCommand } from "../_helpers/svc_command.ts";
import { linkSharedHub } from "./_child_home.ts";
import { FakeEngine } from "./_fake_backend.ts";
import { freePort } from "../_helpers/free_port.ts";

const ADMIN = "replica-admin-key";
const redisBinary = findRedisServer();

/** A child process of `svc` on a known port, ready once `readyPath` answers 200. */
async function startSvc(
  args: string[],
  home: string,
  port: number,
  readyPath: string,
): Promise<Deno.ChildProcess> {
  const child = svcCommand(args, {
    env: {
      SVC_HOME: home,
      SVC_ADMIN_API_KEY: ADMIN,
      SVC_LOG_LEVEL: "error",
      NO_COLOR: "1",
    },
    stdout: "null",
    stderr: "null",
  }).spawn();
  const deadline = Date.now() + 60_000;
  while (true) {
    try {
      const res = await fetch(`http://127.0.0.1:${port}${readyPath}`);
      await res.body?.cancel();
      if (res.status === 200) return child;
    } catch { /* not listening yet */ }
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      await child.status;
      throw new Error(`svc ${args.slice(0, 2).join(" ")} did not get ready on ${port}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Round robin over the gateways that accept connections. */
function loadBalancer(ports: () => number[]): { url: string; stop(): Promise<void> } {
  let next = 0;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const url = new URL(req.url);
    const body = req.body ? await req.arrayBuffer() : undefined;
    const live = ports();
    for (let i = 0; i < live.length; i++) {
      const port = live[next++ % live.length];
      try {
        return await fetch(`http://127.0.0.1:${port}${url.pathname}${url.search}`, {
          method: req.method,
          headers: req.headers,
          body,
        });
      } catch { /* that replica is gone: the next one */ }
    }
    return new Response("no replica", { status: 502 });
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    stop: () => server.shutdown(),
  };
}

async function within<T>(ms: number, f: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + ms;
  while (true) {
    const value = await f();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

Deno.test({
  name: "replicas on PostgreSQL and Redis behind a load balancer serve any request correctly",
  ignore: POSTGRES_MISSING !== undefined || redisBinary === null,
  fn: async (t) => {
    const home = await Deno.makeTempDir({ prefix: "svc-replicas-" });
    await linkSharedHub(home);
    const children: Deno.ChildProcess[] = [];
    let redis: RedisServer | undefined;
    const slow = new FakeEngine("slow", { delayMs: 80 });
    const gatewayPorts: number[] = [];
    const alive = new Set<number>();
    const lb = loadBalancer(() => gatewayPorts.filter((p) => alive.has(p)));
    const call = async (
      base: string,
      key: string,
      method: string,
      path: string,
      body?: unknown,
    ) => {
      const res = await fetch(`${base}/v1${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : null };
    };
    const direct = (port: number) => `http://127.0.0.1:${port}`;
    try {
      const [state, server] = await Promise.all([freshPostgresUrl(), startRedis(redisBinary!)]);
      redis = server;
      const enginePort = freePort();
      children.push(
        await startSvc(
          ["llm", "run", "--model", "demo/chat", "--port", String(enginePort), "--offline"],
          home,
          enginePort,
          "/health",
        ),
      );
      const startGatewayReplica = async () => {
        const port = freePort();
        const child = await startSvc(
          [
            ...["llm", "gateway", "--port", String(port), "--state", state, "--coord", redis!.url],
            ...["--backend", `http://127.0.0.1:${enginePort}/v1`],
          ],
          home,
          port,
          "/health/ready",
        );
        children.push(child);
        gatewayPorts.push(port);
        alive.add(port);
        return { port, child };
      };
      const replicas = [
        await startGatewayReplica(),
        await startGatewayReplica(),
        await startGatewayReplica(),
      ];
      const [a, b, c] = replicas.map((r) => direct(r.port));

      const replicaCount = async (base: string) =>
        (await call(base, ADMIN, "GET", "/management/replicas")).body.data.length;
      await t.step("every replica is listed by every replica", async () => {
        for (const base of [a, b, c]) {
          await within(3_000, async () => (await replicaCount(base)) === 3 ? true : undefined);
        }
      });

      await t.step("an engine registered on one replica is served by all", async () => {
        const reg = await call(a, ADMIN, "POST", "/management/engines/register", {
          id: "slow",
          base_url: slow.serve(),
          kind: "llm",
          models: ["slow-model"],
          max_concurrency: 1,
        });
        assertEquals(reg.status, 201, JSON.stringify(reg.body));
        for (const base of [b, c]) {
          await within(2_000, async () => {
            const models = await call(base, ADMIN, "GET", "/models");
            return models.body.data.some((m: { id: string }) => m.id === "slow-model")
              ? true
              : undefined;
          });
        }
      });

      const made = await call(lb.url, ADMIN, "POST", "/management/keys", {
        name: "team",
        scope: "inference",
      });
      const key = made.body.key as string;

      await t.step(
        "a Responses chain continues on another replica, and after its own dies",
        async () => {
          const first = await call(a, key, "POST", "/responses", {
            model: "demo/chat",
            input: "My name is Ada.",
            max_output_tokens: 4,
          });
          assertEquals(first.status, 200, JSON.stringify(first.body));
          const second = await call(b, key, "POST", "/responses", {
            model: "demo/chat",
            input: "And my name?",
            previous_response_id: first.body.id,
            max_output_tokens: 4,
          });
          assertEquals(second.status, 200, JSON.stringify(second.body));
          // Replica A is killed: the chain goes on through the load balancer.
          replicas[0].child.kill("SIGKILL");
          await replicas[0].child.status;
          alive.delete(replicas[0].port);
          // Its heartbeat stops: the others stop listing it within its 3 s lifetime.
          await within(5_000, async () => (await replicaCount(b)) === 2 ? true : undefined);
          for (let i = 0; i < 3; i++) {
            const next = await call(lb.url, key, "POST", "/responses", {
              model: "demo/chat",
              input: `Turn ${i}`,
              previous_response_id: second.body.id,
              max_output_tokens: 4,
            });
            assertEquals(next.status, 200, JSON.stringify(next.body));
          }
        },
      );

      await t.step("a key's rpm is exact across replicas", async () => {
        const limited = await call(lb.url, ADMIN, "POST", "/management/keys", {
          name: "limited",
          scope: "inference",
          rpm: 4,
        });
        const left = 60_000 - (Date.now() % 60_000);
        if (left < 5_000) await new Promise((r) => setTimeout(r, left + 50));
        const statuses = await Promise.all(
          Array.from(
            { length: 12 },
            () => call(lb.url, limited.body.key, "GET", "/models").then((r) => r.status),
          ),
        );
        // GET /models is not counted: only inference calls are.
        assertEquals(statuses, Array(12).fill(200));
        const chats = await Promise.all(
          Array.from(
            { length: 12 },
            () =>
              call(lb.url, limited.body.key, "POST", "/chat/completions", {
                model: "slow-model",
                messages: [{ role: "user", content: "hi" }],
              }).then((r) => r.status),
          ),
        );
        assertEquals(chats.filter((s) => s === 200).length, 4, String(chats));
        assertEquals(chats.filter((s) => s === 429).length, 8, String(chats));
      });

      await t.step("a backend's max_concurrency holds across replicas", async () => {
        slow.maxInFlight = 0;
        const statuses = await Promise.all(
          Array.from({ length: 8 }, () =>
            call(lb.url, key, "POST", "/chat/completions", {
              model: "slow-model",
              messages: [{ role: "user", content: "hi" }],
            }).then((r) => r.status)),
        );
        assertEquals(statuses, Array(8).fill(200));
        assertEquals(slow.maxInFlight, 1);
      });

      await t.step("a key revoked on one replica is refused by every replica", async () => {
        const revoked = await call(b, ADMIN, "DELETE", `/management/keys/${made.body.id}`);
        assertEquals(revoked.status, 200);
        for (const base of [b, c]) {
          await within(3_000, async () => {
            const res = await call(base, key, "GET", "/models");
            return res.status === 401 ? true : undefined;
          });
        }
      });

      await t.step(
        "a replica started later serves the engines and state already there",
        async () => {
          const late = await startGatewayReplica();
          const models = await within(3_000, async () => {
            const res = await call(direct(late.port), ADMIN, "GET", "/models");
            const ids = res.body.data.map((m: { id: string }) => m.id);
            return ids.includes("slow-model") && ids.includes("demo/chat") ? ids : undefined;
          });
          assert(models.length >= 2);
          const keys = await call(direct(late.port), ADMIN, "GET", "/management/keys");
          assertEquals(keys.body.data.length, 2);
        },
      );
    } finally {
      for (const child of children) {
        try {
          child.kill("SIGKILL");
        } catch { /* already gone */ }
        await child.status;
      }
      await lb.stop();
      await slow.close();
      await redis?.stop();
      await Deno.remove(home, { recursive: true }).catch(() => {});
    }
  },
});
