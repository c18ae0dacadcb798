import { ValidationError } from "../../../src/core/errors.ts";
import { checkRevision, isCommitSha, parseRepoId } from "../../../src/engine/hub/repo_id.ts";
import { assertEquals, assertThrows } from "../../_assert.ts";

Deno.test("parseRepoId() splits org/name and accepts legacy single names", () => {
  assertEquals(parseRepoId("Xenova/all-MiniLM-L6-v2"), {
    id: "Xenova/all-MiniLM-L6-v2",
    owner: "Xenova",
    name: "all-MiniLM-L6-v2",
  });
  assertEquals(parseRepoId("gpt2").owner, "");
});

Deno.test("parseRepoId() refuses ids that could escape the cache or a URL", () => {
  for (const bad of ["", "a/b/c", "../x", "a/..", "a/.b", "a b/c", "/abs", "a/b?x"]) {
    const err = assertThrows(() => parseRepoId(bad), ValidationError, "org/name");
    assertEquals(err.param, "model");
  }
});

Deno.test("checkRevision() accepts branches, tags, PR refs and shas, refuses traversal", () => {
  for (const ok of ["main", "v1.0", "refs/pr/1", "a".repeat(40)]) {
    assertEquals(checkRevision(ok), ok);
  }
  for (const bad of ["", "..", "a/../b", "a//b", "a\\b", "x\ny"]) {
    assertThrows(() => checkRevision(bad), ValidationError, "revision");
  }
});

Deno.test("isCommitSha() is true only for 40 hex digits", () => {
  assertEquals([isCommitSha("0123456789abcdef0123456789abcdef01234567"), isCommitSha("main")], [
    true,
    false,
  ]);
});
