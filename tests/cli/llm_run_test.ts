// `svc llm run` as a real subprocess: a model given as a path that does not exist.
import { assertEquals, assertMatch } from "../_assert.ts";
import { runCli, withHome } from "./_run_cli.ts";

const PERMS = [
  "--allow-read",
  "--allow-write",
  "--allow-env",
  "--allow-ffi",
  "--allow-sys",
  "--allow-net=127.0.0.1",
];

Deno.test("svc llm run --model ./no-such-folder says the folder was not found (exit 66)", async () => {
  await withHome(async (home) => {
    const result = await runCli(["llm", "run", "--model", "./no-such-folder", "--port", "0"], {
      perms: PERMS,
      home,
    });
    assertEquals(result.code, 66, result.stderr);
    assertMatch(result.stderr, /^svc: model folder '\.\/no-such-folder' was not found;/m);
  });
});
