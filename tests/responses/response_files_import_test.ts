// Responses kept as files before the state store are moved into it once: chains go on, files
// that are not responses are left out, the folder is renamed so the next start does nothing.
import { join } from "node:path";
import { assertEquals } from "../_assert.ts";
import { setupLogger } from "../../src/core/logging.ts";
import { importResponseFiles } from "../../src/responses/response_files_import.ts";
import { ResponseStore } from "../../src/responses/response_store.ts";
import { openStateStore } from "../../src/state/open_state_store.ts";

setupLogger("error");

Deno.test("importResponseFiles moves a response folder into the state store once", async () => {
  const dir = await Deno.makeTempDir({ prefix: "svc-old-responses-" });
  const responses = join(dir, "responses");
  await Deno.mkdir(responses);
  const ids = ["a", "b"].map((c) => `resp_${c.repeat(32)}`);
  for (const id of ids) {
    await Deno.writeTextFile(
      join(responses, `${id}.json`),
      JSON.stringify({ response: { id }, messages: [{ role: "user", content: id }] }),
    );
  }
  await Deno.writeTextFile(join(responses, `resp_${"c".repeat(32)}.json`), "{not json");
  const state = await openStateStore("sqlite::memory:");
  try {
    assertEquals(await importResponseFiles(responses, state), 2);
    const store = new ResponseStore({ state });
    for (const id of ids) assertEquals((await store.get(id))?.messages[0].content, id);
    assertEquals((await Deno.stat(`${responses}.migrated`)).isDirectory, true);
    assertEquals(await importResponseFiles(responses, state), 0);
  } finally {
    await state.close();
    await Deno.remove(dir, { recursive: true });
  }
});
