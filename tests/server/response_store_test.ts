import { ResponseStore, type StoredResponse } from "../../src/server/response_store.ts";
import { ResponseAssembler } from "../../src/protocol/responses_response.ts";
import { assert, assertEquals, assertMatch } from "../_assert.ts";

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
    // Distinct modification times, so "oldest" is well defined on coarse file systems.
    await Deno.utime(`${dir}/${a.response.id}.json`, 1000, 1000);
    await before.put(b);
    await Deno.utime(`${dir}/${b.response.id}.json`, 2000, 2000);
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
