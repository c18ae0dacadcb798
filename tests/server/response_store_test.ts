import { ResponseStore, type StoredResponse } from "../../src/server/response_store.ts";
import { ResponseAssembler } from "../../src/protocol/responses_response.ts";
import { assert, assertEquals } from "../_assert.ts";

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
