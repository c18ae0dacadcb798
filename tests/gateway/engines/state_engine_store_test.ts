// Engine registrations in the state store: an old gateway_engines.json is imported once (and
// renamed), rows of other replicas' started engines are never removed by this one, and a gateway
// that starts no engines neither starts copies of them nor removes them; a poll of the store that
// read the engines before this replica's own change was saved does not undo that change.
import { join } from "node:path";
import { assertEquals } from "../../_assert.ts";
import { Dispatcher } from "../../../src/gateway/dispatcher.ts";
import { EngineManager } from "../../../src/gateway/engines/engine_manager.ts";
import { EngineStore, type StoredEngine } from "../../../src/gateway/engines/engine_store.ts";
import { StateEngineStore } from "../../../src/gateway/engines/state_engine_store.ts";
import { openStateStore } from "../../../src/state/open_state_store.ts";
import type { StateStore } from "../../../src/state/state_store.ts";

const REMOTE: StoredEngine = {
  origin: "remote",
  id: "r1",
  kind: "llm",
  baseUrl: "http://127.0.0.1:9/v1",
  models: ["m"],
  apiKey: null,
  createdAt: 1,
};
const MANAGED: StoredEngine = {
  origin: "managed",
  id: "chat-8001",
  kind: "chat",
  model: null,
  port: 8001,
  createdAt: 2,
};

Deno.test("StateEngineStore.load() imports gateway_engines.json into SQLite once", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const legacy = join(dir, "engines", "gateway_engines.json");
    await new EngineStore(legacy).save([REMOTE, MANAGED]);
    const url = `sqlite:${join(dir, "state.db")}`;
    let state = await openStateStore(url);
    // Rows come in the order they were last written; the same millisecond ties by id.
    const byId = (a: StoredEngine, b: StoredEngine) => a.id.localeCompare(b.id);
    assertEquals(
      (await new StateEngineStore(state, { legacyFile: legacy }).load()).sort(byId),
      [REMOTE, MANAGED].sort(byId),
    );
    await state.close();
    // The file is renamed, and a second start reads the rows, not the file.
    assertEquals((await Deno.stat(`${legacy}.migrated`)).isFile, true);
    await new EngineStore(legacy).save([]);
    state = await openStateStore(url);
    assertEquals(
      (await new StateEngineStore(state, { legacyFile: legacy }).load()).map((e) => e.id).sort(),
      ["chat-8001", "r1"],
    );
    await state.close();
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("StateEngineStore.save() keeps another replica's started engines", async () => {
  const state = await openStateStore("sqlite::memory:");
  try {
    const a = new StateEngineStore(state);
    const b = new StateEngineStore(state, { pollMs: 10 });
    await a.load();
    await b.load();
    let seen: string[] = [];
    const stop = b.watch((engines) => (seen = engines.map((e) => e.id)));
    await a.save([MANAGED]);
    while (seen.length === 0) await new Promise((r) => setTimeout(r, 10));
    stop();
    assertEquals(seen, ["chat-8001"]);
    // b knows a's started engine but did not start it: saving its own list leaves it alone.
    await b.save([REMOTE]);
    assertEquals((await state.listEngines()).engines.map((e) => e.id).sort(), ["chat-8001", "r1"]);
  } finally {
    await state.close();
  }
});

Deno.test("a gateway that starts no engines neither starts nor removes a started engine's row", async () => {
  const dir = await Deno.makeTempDir();
  const url = `sqlite:${join(dir, "state.db")}`;
  // `svc llm serve` on this store started an engine; `svc llm gateway` then starts on it.
  const serve = await openStateStore(url);
  const gateway = await openStateStore(url);
  const manager = new EngineManager(new Dispatcher(), {
    home: dir,
    store: new StateEngineStore(gateway),
    remoteOnly: true,
  });
  try {
    await serve.putEngine(MANAGED.id, { ...MANAGED }, null);
    assertEquals(await manager.restore(), []);
    assertEquals(manager.list(), []);
    // Its own registrations are saved beside the row, which stays.
    await manager.registerRemote({
      id: "r2",
      baseUrl: "http://127.0.0.1:9/v1",
      kind: "chat",
      models: ["m"],
    });
    assertEquals((await serve.listEngines()).engines.map((e) => e.id).sort(), ["chat-8001", "r2"]);
  } finally {
    await manager.close();
    await serve.close();
    await gateway.close();
    await Deno.remove(dir, { recursive: true });
  }
});

// The state store whose next read of the engines, once armed, waits until released: one poll of
// the watcher holds a listing while the manager registers or removes an engine.
function holdNextListing(state: StateStore) {
  let hold: { reached(): void; gate: Promise<void> } | undefined;
  const listEngines = async () => {
    const h = hold;
    hold = undefined;
    if (h) {
      h.reached();
      await h.gate;
    }
    return await state.listEngines();
  };
  const held = new Proxy(state, {
    get: (target, name) => {
      if (name === "listEngines") return listEngines;
      const value = Reflect.get(target, name);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  const arm = () => {
    let reached!: () => void;
    let release!: () => void;
    const atGate = new Promise<void>((r) => reached = r);
    hold = { reached, gate: new Promise<void>((r) => release = r) };
    return { atGate, release };
  };
  return { held, arm };
}

Deno.test("a poll read while the manager registers or removes an engine does not undo it", async () => {
  const dir = await Deno.makeTempDir();
  const state = await openStateStore(`sqlite:${join(dir, "state.db")}`);
  const { held, arm } = holdNextListing(state);
  const dispatcher = new Dispatcher();
  const manager = new EngineManager(dispatcher, {
    home: dir,
    store: new StateEngineStore(held, { pollMs: 5 }),
    remoteOnly: true,
  });
  let others = 0;
  // Another replica registers an engine, so the next poll reads the listing: held there.
  const holdPoll = async () => {
    const hold = arm();
    const id = `other-${++others}`;
    await state.putEngine(id, { ...REMOTE, id, baseUrl: `http://127.0.0.1:9/${id}/v1` }, null);
    await hold.atGate;
    return hold.release;
  };
  try {
    await manager.restore();
    let release = await holdPoll();
    // Registered while the poll holds a listing without it: served once answered (the stale
    // listing removed it until the next poll).
    const registering = manager.registerRemote({
      id: "new",
      baseUrl: "http://127.0.0.1:9/new/v1",
      kind: "chat",
      models: ["m"],
    });
    release();
    assertEquals((await registering).state === "stopped", false);
    assertEquals(dispatcher.backend("new") !== undefined, true);

    release = await holdPoll();
    // Removed while the poll holds a listing with it: gone from the gateway and the store (the
    // stale listing brought it back, and the row stayed).
    const stopping = manager.stop("new");
    release();
    assertEquals((await stopping).state, "stopped");
    assertEquals(dispatcher.backend("new"), undefined);
    assertEquals((await state.listEngines()).engines.some((e) => e.id === "new"), false);
  } finally {
    await manager.close();
    await state.close();
    await Deno.remove(dir, { recursive: true });
  }
});
