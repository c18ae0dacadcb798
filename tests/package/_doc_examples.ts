// Finds the imports of the code blocks in the JSDoc of our sources and tells which of them name a
// symbol the package exports through a relative path. Used by doc_examples_test.ts.
import { join, relative } from "node:path";
import { pathToFileURL } from "node:url";
import { ROOT } from "../cli/_run_cli.ts";

/** One named import of a doc example: `name` (imported as written) from `specifier`. */
export interface ExampleImport {
  /** The source file whose JSDoc holds the example (relative to the root). */
  file: string;
  /** 1-based line of the import in that file. */
  line: number;
  /** The import's specifier as written. */
  specifier: string;
  /** The imported name (before any `as`). */
  name: string;
}

/** An import that names a package-exported symbol by a relative path. */
export interface RelativeExampleImport extends ExampleImport {
  /** The package specifier to import it from instead, e.g. `@svc/cli/client`. */
  entry: string;
  /** Its name in that entry (differs only for an entry that renames it). */
  entryName: string;
}

/** What `deno doc --json` gives, as far as these tests read it. */
export interface DocJson {
  nodes: Record<string, {
    symbols?: {
      name: string;
      declarations: { location: { filename: string; line: number } }[];
    }[];
  }>;
}

/** `deno doc --json` of `files` (absolute paths). */
export async function denoDoc(files: string[]): Promise<DocJson> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["doc", "--json", ...files],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (output.code !== 0) {
    throw new Error(`deno doc failed: ${new TextDecoder().decode(output.stderr)}`);
  }
  return JSON.parse(new TextDecoder().decode(output.stdout));
}

/** The TypeScript files of the package: the export entries and everything under src/. */
export async function packageFiles(): Promise<
  { entries: Record<string, string>; files: string[] }
> {
  const config = JSON.parse(await Deno.readTextFile(join(ROOT, "deno.json")));
  const entries: Record<string, string> = {};
  for (const [key, path] of Object.entries(config.exports as Record<string, string>)) {
    entries[key === "." ? config.name : `${config.name}/${key.slice(2)}`] = join(ROOT, path);
  }
  const files = [...Object.values(entries)];
  const walk = async (dir: string) => {
    for await (const entry of Deno.readDir(dir)) {
      const path = join(dir, entry.name);
      if (entry.isDirectory) await walk(path);
      else if (/\.tsx?$/.test(entry.name) && !entry.name.endsWith(".d.ts")) files.push(path);
    }
  };
  await walk(join(ROOT, "src"));
  return { entries, files: files.sort() };
}

/** The code blocks of the JSDoc comments of `text`, with the 1-based line of their first line. */
export function docCodeBlocks(text: string): { line: number; code: string }[] {
  const blocks: { line: number; code: string }[] = [];
  for (const comment of text.matchAll(/\/\*\*[\s\S]*?\*\//g)) {
    const firstLine = text.slice(0, comment.index).split("\n").length;
    const lines = comment[0].split("\n").map((l) => l.replace(/^\s*\*( |$)/, ""));
    let start = -1;
    for (const [i, line] of lines.entries()) {
      if (!/^\s*```/.test(line)) continue;
      if (start < 0) {
        start = i + 1;
      } else {
        blocks.push({ line: firstLine + start, code: lines.slice(start, i).join("\n") });
        start = -1;
      }
    }
  }
  return blocks;
}

/** The named imports of `code`: static ones (`import { a, type B } from "x"`) and `import("x").C`. */
export function namedImports(code: string): { offset: number; specifier: string; name: string }[] {
  const found: { offset: number; specifier: string; name: string }[] = [];
  for (const m of code.matchAll(/import\s+(?:type\s+)?\{([^}]*)\}\s*from\s*["']([^"']+)["']/g)) {
    for (const part of m[1].split(",")) {
      const name = part.trim().replace(/^type\s+/, "").split(/\s+as\s+/)[0].trim();
      if (name) found.push({ offset: m.index, specifier: m[2], name });
    }
  }
  for (const m of code.matchAll(/import\(\s*["']([^"']+)["']\s*\)\.(\w+)/g)) {
    found.push({ offset: m.index, specifier: m[1], name: m[2] });
  }
  // Default and namespace imports of a relative path would hide which names they use.
  for (
    const m of code.matchAll(/import\s+(?:type\s+)?(\*\s*as\s+\w+|\w+)\s+from\s*["']([^"']+)["']/g)
  ) {
    found.push({ offset: m.index, specifier: m[2], name: m[1].startsWith("*") ? "*" : "default" });
  }
  return found;
}

/**
 * Every import in a doc example of `files` that names a symbol some export entry exports, through a
 * relative path; with the narrowest entry (fewest exports) that exports it. `all` returns every
 * relative import instead, with `entry` left empty for internal symbols.
 */
export async function relativeImportsOfPackageSymbols(
  options: { all?: boolean } = {},
): Promise<RelativeExampleImport[]> {
  const { entries, files } = await packageFiles();
  // Where each exported symbol is declared -> the entries that export it, narrowest first.
  // (One `deno doc` per entry: given several modules, it places a symbol that an earlier one
  // exports at the later one's re-export.)
  const exported = new Map<string, { entry: string; name: string; size: number }[]>();
  for (const [entry, path] of Object.entries(entries)) {
    const symbols = (await denoDoc([path])).nodes[pathToFileURL(path).href]?.symbols ?? [];
    for (const symbol of symbols) {
      for (const { location } of symbol.declarations) {
        const key = `${location.filename}:${location.line}`;
        const list = exported.get(key) ?? [];
        list.push({ entry, name: symbol.name, size: symbols.length });
        exported.set(key, list);
      }
    }
  }
  for (const list of exported.values()) list.sort((a, b) => a.size - b.size);

  const imports: ExampleImport[] = [];
  const targets = new Set<string>();
  for (const path of files) {
    const text = await Deno.readTextFile(path);
    for (const block of docCodeBlocks(text)) {
      for (const imp of namedImports(block.code)) {
        if (!imp.specifier.startsWith(".")) continue;
        const target = new URL(imp.specifier, pathToFileURL(path)).href;
        targets.add(target);
        imports.push({
          file: relative(ROOT, path),
          line: block.line + block.code.slice(0, imp.offset).split("\n").length - 1,
          specifier: imp.specifier,
          name: imp.name,
        });
      }
    }
  }
  const targetDoc = await denoDoc([...targets].map((t) => new URL(t).pathname));
  // A module that re-exports a symbol another of them exports: its true declaration, by itself.
  for (const target of targets) {
    const symbols = targetDoc.nodes[target]?.symbols ?? [];
    if (symbols.some((s) => s.declarations.some((d) => d.location.filename !== target))) {
      targetDoc.nodes[target] = (await denoDoc([new URL(target).pathname])).nodes[target];
    }
  }
  const result: RelativeExampleImport[] = [];
  for (const imp of imports) {
    const target = new URL(imp.specifier, pathToFileURL(join(ROOT, imp.file))).href;
    const symbols = targetDoc.nodes[target]?.symbols ?? [];
    const wanted = imp.name === "*" || imp.name === "default"
      ? symbols
      : symbols.filter((s) => s.name === imp.name);
    const entry = wanted.flatMap((s) =>
      s.declarations.flatMap(({ location }) =>
        exported.get(`${location.filename}:${location.line}`) ?? []
      )
    ).sort((a, b) =>
      a.size - b.size
    )[0];
    if (entry) result.push({ ...imp, entry: entry.entry, entryName: entry.name });
    else if (options.all) result.push({ ...imp, entry: "", entryName: "" });
  }
  return result;
}
