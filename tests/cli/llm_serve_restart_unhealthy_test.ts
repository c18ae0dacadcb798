// `svc llm serve --restart-unhealthy-after`: listed in the help, checked before anything starts.
// What it does is tested on the supervisor (tests/gateway/engines/engine_supervisor_unhealthy_test.ts).
import { assert, assertEquals, assertMatch } from "../_assert.ts";
import { runCli, withHome } from "./_run_cli.ts";

Deno.test("svc llm serve --restart-unhealthy-after: in the help with its default; a bad value is one line", async () => {
  await withHome(async (home) => {
    const help = await runCli(["llm", "serve", "--restart-unhealthy-after", "5", "--help"], {
      perms: [],
      home,
    });
    assertEquals(help.code, 0, help.stderr);
    assertMatch(
      help.stdout,
      /--restart-unhealthy-after <seconds>\n[^\n]*\n[^\n]*default 30; 0 never/,
    );

    const bad = await runCli(
      ["llm", "serve", "--restart-unhealthy-after", "soon", "--port", "0", "--offline"],
      { perms: ["--allow-read", "--allow-write", "--allow-env", "--allow-net"], home },
    );
    assert(bad.code !== 0);
    assertEquals(bad.stdout, "");
    assertEquals(bad.stderr.trim().split("\n").length, 1, bad.stderr);
    assertMatch(bad.stderr, /--restart-unhealthy-after is 'soon': expected a whole number from 0/);
  });
});
