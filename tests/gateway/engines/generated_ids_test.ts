// Engine ids the manager makes up (`remote-chat-N`, a registration without an id) on a state store
// shared by two replicas, SQLite always and a real PostgreSQL where its binaries exist: a replica
// that has not yet seen the other's registration makes up the same id; the store refuses the row
// and the registration takes the next id instead of answering the user a 409 about an id they
// never gave. An id the user gave is still a 409.
import { join } from "node:path";
import { assertEquals, assertRejects } from "../../_assert.ts";
import { ConflictError } from "../../../src/core/errors.ts";
import { Dispatcher } from "../../../src/gateway/dispatcher.ts";
import { EngineManager } from "../../../src/gateway/engines/engine_manager.ts";
import { StateEngineStore } from "../../../src/gateway/engines/state_engine_store.ts";
import { openStateStore } from "../../../src/state/open_state_store.ts";
import type { StateStore } from "../../../src/state/state_store.ts";
import { freshPostgresUrl, POSTGRES_MISSING } from "../../state/_postgres.ts";

const VARIANTS = [
  {
    name: "sqlite",
    ignore: undefined as string | undefined,
    url: (dir: string) => Promise.resolve(`sqlite:${join(dir, "state.db")}`),
  },
  { name: "postgres", ignore: POSTGRES_MISSING, url: () => freshPostgresUrl() },
];

const register = (manager: EngineManager, url: string, id?: string) =>
  manager.registerRemote({
    ...(id === undefined ? {} : { id }),
    baseUrl: `http://127.0.0.1:9/${url}/v1`,
    kind: "chat",
    models: [url],
  });

for (const v of VARIANTS) {
  Deno.test({
    name:
      `replicas on ${v.name}: a made-up engine id taken by the other replica gives the next one`,
    ignore: v.ignore !== undefined,
    fn: async () => {
      const dir = await Deno.makeTempDir();
      const url = await v.url(dir);
      const states = [await openStateStore(url), await openStateStore(url)];
      // Neither watches the store (no restore()): each has yet to see the other's registrations,
      // as when both register at the same moment.
      const [a, b] = states.map((state) =>
        new EngineManager(new Dispatcher(), {
          home: dir,
          store: new StateEngineStore(state),
          remoteOnly: true,
        })
      );
      try {
        assertEquals((await register(b, "on-b")).id, "remote-chat-1");
        const onA = await register(a, "on-a");
        assertEquals(onA.id, "remote-chat-2");
        assertEquals(onA.state === "stopped", false);
        assertEquals(a.list().map((e) => e.id), ["remote-chat-2"]);
        const rows = (await states[0].listEngines()).engines;
        assertEquals(
          rows.map((r) => [r.id, (r.data.models as string[])[0]]).sort(),
          [["remote-chat-1", "on-b"], ["remote-chat-2", "on-a"]],
        );

        // The user's own id taken on the other replica: theirs to change.
        await register(b, "mine-b", "mine");
        const err = await assertRejects(() => register(a, "mine-a", "mine"), ConflictError);
        assertEquals([err.status, err.param], [409, "id"]);
        assertEquals(a.list().map((e) => e.id), ["remote-chat-2"]);
      } finally {
        await a.close();
        await b.close();
        for (const s of states) await s.close();
        await Deno.remove(dir, { recursive: true });
      }
    },
  });
}

// `svc llm serve` on two hosts sharing one store: engines started through the management API are
// their gateway's own. The engines are stand-ins that never answer: they stay starting, and
// their rows stay in the store until the engine is removed.
const startedBy = (gateway: string, state: StateStore, dir: string) =>
  new EngineManager(new Dispatcher(), {
    home: dir,
    store: new StateEngineStore(state, { gateway }),
    portCandidates: () => [],
    supervisor: { command: () => ({ command: "sleep", args: ["600"], env: {} }) },
  });

async function freePort(): Promise<number> {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  listener.close();
  return await Promise.resolve(port);
}

for (const v of VARIANTS) {
  Deno.test({
    name: `serve gateways on two hosts sharing ${v.name}: each starts again only its own engines`,
    ignore: v.ignore !== undefined,
    fn: async () => {
      const dir = await Deno.makeTempDir();
      const url = await v.url(dir);
      const states = [await openStateStore(url), await openStateStore(url)];
      const port = await freePort();
      const rowsOf = async () =>
        (await states[0].listEngines()).engines.map((r) => [r.id, r.data.gateway ?? null]).sort();
      let [a, b] = [startedBy("host-a", states[0], dir), startedBy("host-b", states[1], dir)];
      try {
        // Each engine on its host's own port: the id made up from it is taken on the other.
        const onA = await a.startEngine({ model: "demo/chat", port, reuse: false });
        const onB = await b.startEngine({ model: "demo/chat", port, reuse: false });
        assertEquals([onA.engine.id, onB.engine.id], [`chat-${port}`, `chat-${port}-2`]);
        // A row of an older version has no gateway: the first to start on the store takes it.
        await states[0].putEngine("chat-old", {
          origin: "managed",
          id: "chat-old",
          kind: "chat",
          model: "demo/chat",
          port,
          createdAt: 1,
        }, null);
        await a.close();
        await b.close();
        assertEquals(await rowsOf(), [
          [`chat-${port}`, "host-a"],
          [`chat-${port}-2`, "host-b"],
          ["chat-old", null],
        ]);

        b = startedBy("host-b", states[1], dir);
        assertEquals((await b.restore()).map((e) => e.id).sort(), [`chat-${port}-2`, "chat-old"]);
        a = startedBy("host-a", states[0], dir);
        assertEquals((await a.restore()).map((e) => e.id), [`chat-${port}`]);
        // Neither removed the other's row; the old row is host-b's now.
        assertEquals(await rowsOf(), [
          [`chat-${port}`, "host-a"],
          [`chat-${port}-2`, "host-b"],
          ["chat-old", "host-b"],
        ]);
        // An id the user gives is still theirs to change when the other host has it.
        const err = await assertRejects(
          () => a.startEngine({ id: "chat-old", model: "demo/chat", reuse: false }),
          ConflictError,
        );
        assertEquals([err.status, err.param], [409, "id"]);
      } finally {
        await a.close();
        await b.close();
        for (const s of states) await s.close();
        await Deno.remove(dir, { recursive: true });
      }
    },
  });
}
