// Every @example in the sources type-checks (`deno check --doc`): those of public symbols import
// from the package's own specifiers (`@svc/cli`, `@svc/cli/client`, …), which Deno resolves to this
// package by the name and exports in deno.json.
//
// Deno adds an import of all the module's exports to each example, so the check runs with a copy
// of deno.json (beside it, so the package still resolves by name) without `noUnusedLocals` and
// `noUnusedParameters`: an example need not use every export of its module.
import { join } from "node:path";
import { assertEquals } from "../_assert.ts";
import { ROOT } from "../cli/_run_cli.ts";

Deno.test("every @example in the entries and src/ passes deno check --doc", async () => {
  const config = JSON.parse(await Deno.readTextFile(join(ROOT, "deno.json")));
  const { noUnusedLocals: _l, noUnusedParameters: _p, ...compilerOptions } = config.compilerOptions;
  const docConfig = join(ROOT, `.deno_doc_check_${crypto.randomUUID()}.json`);
  await Deno.writeTextFile(docConfig, JSON.stringify({ ...config, compilerOptions }));
  try {
    const entries: string[] = Object.values(config.exports);
    const output = await new Deno.Command(Deno.execPath(), {
      args: ["check", "--doc", "--quiet", `--config=${docConfig}`, ...entries, "src/"],
      cwd: ROOT,
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(output.stderr);
    assertEquals(output.code, 0, `deno check --doc:\n${text}`);
  } finally {
    await Deno.remove(docConfig);
  }
});
