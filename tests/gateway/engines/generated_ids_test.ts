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
