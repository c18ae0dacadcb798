// Every @example in the sources type-checks (`deno check --doc`): those of public symbols import
// from the package's own specifiers (`@svc/cli`, `@svc/cli/client`, …), which Deno resolves to this
// package by the name and exports in deno.json.
//
// The rule for imports in doc examples (checked below, so it cannot regress): a symbol that an entry
// of deno.json exports is imported from that entry's specifier, the narrowest one that exports it
// (`@svc/cli/client` rather than `@svc/cli`), never through a relative path: a user can copy it.
// Examples of internal symbols (exported by no entry) stay, importing those internal symbols by
// relative path: the package's docs never show them, and for us they are type-checked usage notes.
// So no example shown in an entry's docs (`deno doc --json <entry>`) imports a relative path at all.
//
// Deno adds an import of all the module's exports to each example, so the check runs with a copy
// of deno.json (beside it, so the package still resolves by name) without `noUnusedLocals` and
// `noUnusedParameters`: an example need not use every export of its module.
import { join } from "node:path";
import { assertEquals } from "../_assert.ts";
import { ROOT } from "../cli/_run_cli.ts";
import { packageFiles, relativeImportsOfPackageSymbols } from "./_doc_examples.ts";

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

Deno.test("no doc example imports a symbol the package exports through a relative path", async () => {
  const found = await relativeImportsOfPackageSymbols();
  const lines = found.map((i) =>
    `${i.file}:${i.line}: import ${i.name} from "${i.entry}", not "${i.specifier}"` +
    (i.entryName === i.name ? "" : ` (exported there as ${i.entryName})`)
  );
  assertEquals(lines, [], `doc examples that a user cannot copy:\n${lines.join("\n")}`);
});

Deno.test("no doc example shown in an entry's docs imports a relative path", async () => {
  const { entries } = await packageFiles();
  const found: string[] = [];
  for (const [entry, path] of Object.entries(entries)) {
    const output = await new Deno.Command(Deno.execPath(), {
      args: ["doc", "--json", path],
      cwd: ROOT,
      stdout: "piped",
      stderr: "piped",
    }).output();
    assertEquals(output.code, 0, new TextDecoder().decode(output.stderr));
    // Every string of its docs: the module doc, its symbols' and their members'.
    JSON.parse(new TextDecoder().decode(output.stdout), (_key, value) => {
      if (typeof value !== "string") return value;
      for (const m of value.matchAll(/(?:from\s*|import\(\s*)["'](\.{1,2}\/[^"']*)["']/g)) {
        found.push(`${entry}: an example imports "${m[1]}": ${value.slice(0, 200)}`);
      }
      return value;
    });
  }
  assertEquals(found, [], found.join("\n"));
});
