// The public names of the package's entries (deno.json "exports"), as `deno doc --json` sees them:
//
// - one name means one thing: a name that several entries export refers to the same declaration in
//   each (the client's `EmbedOptions` and the engine's are different types, so the engine's is
//   `EngineEmbedOptions`); a user who imports it from two entries gets one type, and the docs of
//   one entry never contradict another's;
// - each entry documents itself: `deno doc --lint <entry>` passes for the entry alone, so every
//   type its API names is exported from it (JSR documents and scores each entry on its own).
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { assert, assertEquals } from "../_assert.ts";
import { ROOT } from "../cli/_run_cli.ts";
import { denoDoc } from "./_doc_examples.ts";

const CONFIG = JSON.parse(await Deno.readTextFile(join(ROOT, "deno.json")));
const ENTRIES: string[] = Object.values(CONFIG.exports as Record<string, string>);

async function deno(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const output = await new Deno.Command(Deno.execPath(), {
    args,
    cwd: ROOT,
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder();
  return {
    code: output.code,
    stdout: text.decode(output.stdout),
    stderr: text.decode(output.stderr),
  };
}

Deno.test("no name that the entries export means two things", async () => {
  // name -> where it is declared ("src/x.ts:12", several for merged declarations) -> entries.
  const names = new Map<string, Map<string, string[]>>();
  for (const entry of ENTRIES) {
    // One `deno doc` per entry: given several modules, it would resolve names across them.
    const doc = await denoDoc([join(ROOT, entry)]);
    const symbols = doc.nodes[pathToFileURL(join(ROOT, entry)).href]?.symbols ?? [];
    for (const symbol of symbols) {
      const where = [
        ...new Set(
          symbol.declarations.map(({ location }) =>
            `${location.filename.replace(pathToFileURL(ROOT).href, "")}:${location.line}`
          ),
        ),
      ].sort().join(" + ");
      const meanings = names.get(symbol.name) ?? new Map<string, string[]>();
      meanings.set(where, [...meanings.get(where) ?? [], entry]);
      names.set(symbol.name, meanings);
    }
  }
  const clashes = [...names].filter(([, meanings]) => meanings.size > 1).map(([name, meanings]) =>
    `${name}: ${
      [...meanings].map(([where, entries]) => `${entries.join(", ")} → ${where}`).join("; ")
    }`
  );
  assertEquals(
    clashes,
    [],
    `names that mean different things in different entries:\n${clashes.join("\n")}`,
  );
  // The check has something to check: entries do share names (the errors, the client's types).
  const shared = [...names.get("ServiceError")?.values() ?? []];
  assert(shared.length === 1 && shared[0].length > 1, "ServiceError: not in mod.ts and client.ts?");
});

Deno.test("deno doc --lint passes for each entry alone", async () => {
  const failures: string[] = [];
  for (const entry of ENTRIES) {
    const { code, stderr } = await deno(["doc", "--lint", entry]);
    if (code !== 0) {
      const errors = stderr.split("\n").filter((l) => l.startsWith("error["));
      failures.push(`${entry}: ${errors.length} errors\n  ${errors.join("\n  ")}`);
    }
  }
  assertEquals(failures, [], failures.join("\n"));
});
