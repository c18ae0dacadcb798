import { join } from "node:path";
import { SnapshotCache } from "../../../src/engine/hub/snapshot.ts";
import { assertEquals } from "../../_assert.ts";

Deno.test("SnapshotCache lays out models--org--name with refs, snapshots and listings", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const cache = new SnapshotCache(dir, "org/name");
    assertEquals(cache.repoDir, join(dir, "models--org--name"));
    assertEquals(SnapshotCache.folderName("gpt2"), "models--gpt2");
    assertEquals(await cache.readRef("main"), null);
    await cache.writeRef("main", "abc");
    await cache.writeRef("refs/pr/1", "def");
    assertEquals([await cache.readRef("main"), await cache.readRef("refs/pr/1")], ["abc", "def"]);
    assertEquals(await Deno.readTextFile(join(cache.repoDir, "refs", "main")), "abc");
    assertEquals(await cache.readListing("abc"), null);
    await cache.writeListing("abc", { sha: "abc", siblings: [{ rfilename: "config.json" }] });
    assertEquals((await cache.readListing("abc"))?.siblings, [{ rfilename: "config.json" }]);
    assertEquals(cache.snapshotDir("abc"), join(dir, "models--org--name", "snapshots", "abc"));
    assertEquals(await cache.fileSize("abc", "config.json"), null);
    await Deno.mkdir(cache.snapshotDir("abc"), { recursive: true });
    await Deno.writeTextFile(join(cache.snapshotDir("abc"), "config.json"), "{}");
    assertEquals(await cache.fileSize("abc", "config.json"), 2);
    // No temporary files are left behind by the atomic writes.
    const names = [...Deno.readDirSync(join(cache.repoDir, "refs"))].map((e) => e.name).toSorted();
    assertEquals(names, ["main", "refs%2Fpr%2F1"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
