import { ResponseStore, type StoredResponse } from "../../src/responses/response_store.ts";
import { ResponseAssembler } from "../../src/protocol/responses_response.ts";
import { assert, assertEquals, assertMatch } from "../_assert.ts";
import { createHttpApp } from "../../src/http/http_app.ts";
import { responsesRoutes } from "../../src/responses/responses_route.ts";
import { openStateStore } from "../../src/state/open_state_store.ts";

function entry(text: string): StoredResponse {
  const assembler = new ResponseAssembler({ model: "m", input: text }, { model: "m" });
  assembler.text(text);
  assembler.finish("stop", { promptTokens: 1, completionTokens: 1 });
  return {
    response: assembler.response,
    messages: [{ role: "user", content: text }, { role: "assistant", content: text }],
  };
}

async function files(dir: string): Promise<string[]> {
  const names: string[] = [];
  for await (const e of Deno.readDir(dir)) names.push(e.name);
  return names.sort();
}

Deno.test("ResponseStore keeps responses on disk for a new instance to read", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const first = entry("one");
    await new ResponseStore({ dir }).put(first);
    const again = new ResponseStore({ dir });
    assertEquals(await again.get(first.response.id), first);
    const mode = (await Deno.stat(`${dir}/${first.response.id}.json`)).mode! & 0o777;
    assertEquals(mode, 0o600);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("ResponseStore evicts the oldest beyond its cap, counting files already there", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const [a, b, c, d] = ["a", "b", "c", "d"].map(entry);
    const before = new ResponseStore({ dir, maxEntries: 3 });
    await before.put(a);
    // Distinct modification times, so "oldest" is well defined on coarse file systems (recent
    // ones: older than the age cap would be evicted for that).
    const t = Math.floor(Date.now() / 1000) - 100;
    await Deno.utime(`${dir}/${a.response.id}.json`, t, t);
    await before.put(b);
    await Deno.utime(`${dir}/${b.response.id}.json`, t + 10, t + 10);
    // A restarted server finds a and b, adds c and d: a goes first.
    const after = new ResponseStore({ dir, maxEntries: 3 });
    await after.put(c);
    assertEquals((await files(dir)).length, 3);
    await after.put(d);
    assertEquals(await after.get(a.response.id), undefined);
    for (const kept of [b, c, d]) assertEquals(await after.get(kept.response.id), kept);
    assertEquals(await files(dir), [b, c, d].map((e) => `${e.response.id}.json`).sort());
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("ResponseStore.delete() removes one response and says whether it was there", async () => {
  for (const dir of [await Deno.makeTempDir(), undefined]) {
    const store = new ResponseStore({ dir, maxEntries: 2 });
    const [a, b, c] = ["a", "b", "c"].map(entry);
    await store.put(a);
    await store.put(b);
    assertEquals(await store.delete(a.response.id), true);
    assertEquals(await store.delete(a.response.id), false);
    // The freed place counts: adding c evicts nothing.
    await store.put(c);
    assertEquals(await store.get(b.response.id), b);
    assertEquals(await store.get(c.response.id), c);
    if (dir) await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("ResponseStore ignores ids that are not ours (no path outside its folder)", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/notes.json`, "{}");
    const store = new ResponseStore({ dir, maxEntries: 1 });
    assertEquals(await store.get("../notes"), undefined);
    assertEquals(await store.get("notes"), undefined);
    assertEquals(await store.delete("../../etc/passwd"), false);
    await store.put(entry("x"));
    await store.put(entry("y"));
    // Foreign files are neither counted nor evicted.
    assert((await files(dir)).includes("notes.json"));
    assertEquals((await files(dir)).length, 2);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("ResponseStore without a folder keeps a bounded map in memory", async () => {
  const store = new ResponseStore({ maxEntries: 2 });
  const [a, b, c] = ["a", "b", "c"].map(entry);
  for (const e of [a, b, c]) await store.put(e);
  assertEquals(await store.get(a.response.id), undefined);
  assertEquals(await store.get(c.response.id), c);
});

// Collects what a store logs.
function spyLogger() {
  const lines: string[] = [];
  const log = (level: string) => (message: string, fields?: Record<string, unknown>) =>
    lines.push(`${level} ${message} ${JSON.stringify(fields ?? {})}`);
  return { lines, logger: { warn: log("warn"), error: log("error") } };
}

const bytesOf = (e: StoredResponse) => new TextEncoder().encode(JSON.stringify(e)).byteLength;

Deno.test("ResponseStore refuses an entry over its byte cap: not stored, told and logged", async () => {
  for (const dir of [await Deno.makeTempDir(), undefined]) {
    const { lines, logger } = spyLogger();
    const store = new ResponseStore({ dir, maxEntryBytes: 4096, logger });
    const big = entry("x".repeat(5000));
    const result = await store.put(big);
    assertEquals(result.stored, false);
    assertMatch(result.warning!, /^not stored: \d+ bytes of JSON, over the limit of 4096$/);
    assertEquals(await store.get(big.response.id), undefined);
    assertMatch(lines.join("\n"), /^warn response not stored: too large .*"limit":4096/);
    const small = entry("small");
    assertEquals(await store.put(small), { stored: true });
    assertEquals(await store.get(small.response.id), small);
    if (dir) {
      assertEquals(await files(dir), [`${small.response.id}.json`]);
      await Deno.remove(dir, { recursive: true });
    }
  }
});

Deno.test("ResponseStore evicts the oldest beyond its total byte cap", async () => {
  for (const dir of [await Deno.makeTempDir(), undefined]) {
    const [a, b, c, d] = ["a", "b", "c", "d"].map(entry);
    const size = Math.max(...[a, b, c, d].map(bytesOf));
    // Room for two and a half entries: never three.
    const store = new ResponseStore({ dir, maxTotalBytes: size * 2.5 });
    // One store: its own writes are evicted in their order, even with equal modification times.
    for (const e of [a, b, c, d]) await store.put(e);
    assertEquals(await store.get(a.response.id), undefined);
    assertEquals(await store.get(b.response.id), undefined);
    assertEquals(await store.get(c.response.id), c);
    assertEquals(await store.get(d.response.id), d);
    if (dir) {
      assertEquals((await files(dir)).length, 2);
      await Deno.remove(dir, { recursive: true });
    }
  }
});

Deno.test("ResponseStore caps hold for the folder when several stores (processes) share it", async () => {
  const dir = await Deno.makeTempDir();
  try {
    // As a gateway and an engine once did: each counted only its own writes.
    const stores = [
      new ResponseStore({ dir, maxEntries: 3 }),
      new ResponseStore({ dir, maxEntries: 3 }),
    ];
    const written: StoredResponse[] = [];
    for (let i = 0; i < 10; i++) {
      const e = entry(`turn ${i}`);
      await stores[i % 2].put(e);
      written.push(e);
      // Distinct modification times across the two (as two processes writing minutes apart).
      await new Promise((resolve) => setTimeout(resolve, 10));
      assert((await files(dir)).length <= 3, `${(await files(dir)).length} files after ${i + 1}`);
    }
    // The newest three are kept, whichever store wrote them; both stores find them.
    const newest = written.slice(-3).map((e) => `${e.response.id}.json`).sort();
    assertEquals(await files(dir), newest);
    for (const e of written.slice(-3)) assertEquals(await stores[0].get(e.response.id), e);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("ResponseStore makes its folder 0700, and an existing folder too", async () => {
  if (Deno.build.os === "windows") return;
  const parent = await Deno.makeTempDir();
  try {
    const fresh = `${parent}/fresh/responses`;
    await new ResponseStore({ dir: fresh }).put(entry("a"));
    assertEquals((await Deno.stat(fresh)).mode! & 0o777, 0o700);
    const old = `${parent}/old`;
    await Deno.mkdir(old);
    await Deno.chmod(old, 0o755);
    await new ResponseStore({ dir: old }).put(entry("b"));
    assertEquals((await Deno.stat(old)).mode! & 0o777, 0o700);
    // Reading alone opens the store too.
    await Deno.chmod(old, 0o755);
    await new ResponseStore({ dir: old }).get(`resp_${"0".repeat(32)}`);
    assertEquals((await Deno.stat(old)).mode! & 0o777, 0o700);
  } finally {
    await Deno.remove(parent, { recursive: true });
  }
});

Deno.test("ResponseStore answers a corrupt file as unknown and logs its name", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const { lines, logger } = spyLogger();
    const store = new ResponseStore({ dir, logger });
    const [a, b] = ["a", "b"].map(entry);
    await store.put(a);
    await store.put(b);
    await Deno.writeTextFile(`${dir}/${a.response.id}.json`, '{"response": {"id": "resp_');
    // Valid JSON, not a response (or another one's).
    await Deno.writeTextFile(`${dir}/${b.response.id}.json`, JSON.stringify(entry("c")));
    assertEquals(await store.get(a.response.id), undefined);
    assertEquals(await store.get(b.response.id), undefined);
    assertEquals(lines.length, 2);
    assertMatch(lines[0], /^warn skipping a corrupt stored response/);
    assert(lines[0].includes(`${dir}/${a.response.id}.json`), lines[0]);
    assert(lines[1].includes(`${dir}/${b.response.id}.json`), lines[1]);
    // Deleting it still works.
    assertEquals(await store.delete(a.response.id), true);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("ResponseStore.put() does not throw when the folder cannot be written", async () => {
  const parent = await Deno.makeTempDir();
  try {
    // A file where the folder should be: fails even for root, unlike a read-only mode.
    await Deno.writeTextFile(`${parent}/file`, "");
    const { lines, logger } = spyLogger();
    const store = new ResponseStore({ dir: `${parent}/file/responses`, logger });
    const a = entry("a");
    const result = await store.put(a);
    assertEquals(result, {
      stored: false,
      warning: "not stored: the response store could not be written",
    });
    assertEquals(await store.get(a.response.id), undefined);
    assertMatch(lines.join("\n"), /^error response not stored: the store could not be written/m);
  } finally {
    await Deno.remove(parent, { recursive: true });
  }
});

Deno.test("ResponseStore removes temporary files of killed writes older than a minute on open", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const id = entry("a").response.id;
    const stale = `.${id}.json.tmp-123-abcdef12`;
    const live = `.${id}.json.tmp-456-12345678`;
    await Deno.writeTextFile(`${dir}/${stale}`, '{"half');
    await Deno.writeTextFile(`${dir}/${live}`, '{"half');
    const old = Date.now() / 1000 - 120;
    await Deno.utime(`${dir}/${stale}`, old, old);
    // Not ours: left alone, however old.
    await Deno.writeTextFile(`${dir}/.notes.tmp-1`, "");
    await Deno.utime(`${dir}/.notes.tmp-1`, old, old);
    await new ResponseStore({ dir }).get(id);
    assertEquals(await files(dir), [".notes.tmp-1", live].sort());
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

// ---- Chains stored turn by turn, and the age cap ----

// The Responses routes over a store and a chat stand-in that answers `answer <n>` and keeps every
// chat request's messages.
function chainStore(store: ResponseStore) {
  const seen: unknown[][] = [];
  const app = createHttpApp(responsesRoutes({
    store,
    runChat: (_ctx, body) => {
      seen.push(body.messages);
      // Responses always stream their chat request.
      const chunks = [
        { choices: [{ index: 0, delta: { content: `answer ${seen.length}` } }] },
        { choices: [{ index: 0, delta: {}, finish_reason: "stop" }] },
        { choices: [], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } },
      ];
      const sse = chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`).join("") + "data: [DONE]\n\n";
      return Promise.resolve(
        new Response(sse, { headers: { "content-type": "text/event-stream" } }),
      );
    },
  }));
  return { app, seen };
}

async function turn(app: (req: Request) => Promise<Response>, input: string, previous?: string) {
  const res = await app(
    new Request("http://localhost/v1/responses", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "m", input, previous_response_id: previous }),
    }),
  );
  // deno-lint-ignore no-explicit-any
  return { status: res.status, body: await res.json() as Record<string, any> };
}

Deno.test("ResponseStore keeps a 20-turn chain in linear bytes and rebuilds the same messages", async () => {
  const dir = await Deno.makeTempDir({ prefix: "svc-responses-" });
  try {
    const store = new ResponseStore({ dir });
    const { app, seen } = chainStore(store);
    // What each turn's chat request held when every entry kept the whole conversation.
    const expected: unknown[] = [];
    const sizes: number[] = [];
    let previous: string | undefined;
    for (let i = 0; i < 20; i++) {
      const input = `turn ${i} ` + "x".repeat(2000);
      const { status, body } = await turn(app, input, previous);
      assertEquals(status, 200);
      expected.push({ role: "user", content: input });
      assertEquals(seen[i], expected);
      expected.push({ role: "assistant", content: `answer ${i + 1}` });
      previous = body.id;
      sizes.push((await Deno.stat(`${dir}/${body.id}.json`)).size);
    }
    assertEquals((await store.conversation(previous!)).messages, expected);
    // Each entry holds its own turn: the last is no bigger than the first (give or take its id
    // and digits), and the sum grows linearly (a whole conversation per entry: ~10x this).
    assert(sizes[19] < sizes[0] * 1.2, `${sizes[0]} then ${sizes[19]}`);
    const total = sizes.reduce((a, b) => a + b, 0);
    assert(total < 20 * sizes[0] * 1.2, `${total} bytes for 20 turns of ${sizes[0]}`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("ResponseStore chains on an entry stored whole (before turn-by-turn entries)", async () => {
  const dir = await Deno.makeTempDir({ prefix: "svc-responses-" });
  try {
    const old = entry("old");
    old.messages = [
      { role: "user", content: "one" },
      { role: "assistant", content: "two" },
      { role: "user", content: "old" },
      { role: "assistant", content: "old" },
    ];
    await Deno.writeTextFile(`${dir}/${old.response.id}.json`, JSON.stringify(old));
    const store = new ResponseStore({ dir });
    const { app, seen } = chainStore(store);
    const second = await turn(app, "new", old.response.id);
    assertEquals(second.status, 200);
    const third = await turn(app, "newer", second.body.id);
    assertEquals(third.status, 200);
    assertEquals(seen[1], [
      ...old.messages,
      { role: "user", content: "new" },
      { role: "assistant", content: "answer 1" },
      { role: "user", content: "newer" },
    ]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("ResponseStore: a chain with an evicted ancestor is previous_response_not_found naming it", async () => {
  const store = new ResponseStore();
  const { app } = chainStore(store);
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) ids.push((await turn(app, `t${i}`, ids.at(-1))).body.id);
  assertEquals(await store.delete(ids[1]), true);
  assertEquals(await store.conversation(ids[2]), { missing: ids[1] });
  const res = await turn(app, "more", ids[2]);
  assertEquals(res.status, 400);
  assertEquals(res.body.error.code, "previous_response_not_found");
  assertEquals(res.body.error.param, "previous_response_id");
  assertMatch(res.body.error.message, new RegExp(`'${ids[1]}', earlier in the chain of`));
  // The directly named one missing: the message as before.
  const gone = await turn(app, "more", ids[1]);
  assertEquals(gone.status, 400);
  assertEquals(gone.body.error.code, "previous_response_not_found");
  assertMatch(
    gone.body.error.message,
    new RegExp(`^Previous response with id '${ids[1]}' not found`),
  );
});

Deno.test("ResponseStore: an entry older than maxAgeMs is gone (memory, files, state store)", async () => {
  const dir = await Deno.makeTempDir({ prefix: "svc-responses-" });
  const state = await openStateStore("sqlite::memory:");
  try {
    // The state store ages an entry by its response's created_at, in whole seconds.
    for (const [options, ageMs] of [[{}, 100], [{ dir }, 100], [{ state }, 1100]] as const) {
      const store = new ResponseStore({ ...options, maxAgeMs: ageMs });
      const a = entry("a");
      if ("state" in options) a.response.created_at = Math.floor(Date.now() / 1000);
      assertEquals((await store.put(a)).stored, true);
      assertEquals((await store.get(a.response.id))?.response.id, a.response.id);
      await new Promise((resolve) => setTimeout(resolve, ageMs + 1050));
      assertEquals(await store.get(a.response.id), undefined);
      assertEquals(await store.conversation(a.response.id), { missing: a.response.id });
      // Evicted on the next write.
      const b = entry("b");
      assertEquals((await store.put(b)).stored, true);
      if ("dir" in options) assertEquals(await files(dir), [`${b.response.id}.json`]);
      if ("state" in options) assertEquals(await state.getResponse(a.response.id, ""), undefined);
      assertEquals(await store.get(b.response.id), b);
    }
  } finally {
    await state.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("ResponseStore: by default a file older than 30 days is gone, a recent one kept", async () => {
  const dir = await Deno.makeTempDir({ prefix: "svc-responses-" });
  try {
    const old = entry("old");
    const recent = entry("recent");
    for (const e of [old, recent]) {
      await Deno.writeTextFile(`${dir}/${e.response.id}.json`, JSON.stringify(e));
    }
    const monthAgo = new Date(Date.now() - 31 * 24 * 3600 * 1000);
    await Deno.utime(`${dir}/${old.response.id}.json`, monthAgo, monthAgo);
    const store = new ResponseStore({ dir });
    assertEquals(await store.get(old.response.id), undefined);
    assertEquals(await store.get(recent.response.id), recent);
    await store.put(entry("new"));
    assertEquals((await files(dir)).includes(`${old.response.id}.json`), false);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("ResponseStore: a response is its owner's, and no owner evicts another's (memory, files)", async () => {
  const dir = await Deno.makeTempDir({ prefix: "svc-responses-" });
  try {
    for (const options of [{}, { dir }]) {
      const store = new ResponseStore({ ...options, maxEntries: 2 });
      const mine = entry("mine");
      const shared = entry("shared");
      await store.put(mine, "key_a");
      await store.put(shared);
      assertEquals((await store.get(mine.response.id, "key_a"))?.response, mine.response);
      for (const other of ["key_b", undefined]) {
        assertEquals(await store.get(mine.response.id, other), undefined);
        assertEquals(await store.conversation(mine.response.id, other), {
          missing: mine.response.id,
        });
        assertEquals(await store.delete(mine.response.id, other), false);
      }
      assertEquals(await store.get(shared.response.id, "key_a"), undefined);
      // key_b stores past the cap (in the folder, through a second store, as another process):
      // its own oldest go, key_a's and the shared one stay.
      const writer = "dir" in options ? new ResponseStore({ ...options, maxEntries: 2 }) : store;
      const spam = ["1", "2", "3"].map(entry);
      for (const e of spam) await writer.put(e, "key_b");
      assertEquals(await store.get(spam[0].response.id, "key_b"), undefined);
      assertEquals((await store.get(spam[2].response.id, "key_b"))?.response, spam[2].response);
      assertEquals((await store.get(mine.response.id, "key_a"))?.response, mine.response);
      assertEquals(await store.get(shared.response.id), shared);
      assertEquals(await store.delete(mine.response.id, "key_a"), true);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
