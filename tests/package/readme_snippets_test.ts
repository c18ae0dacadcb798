// Every ```ts / ```typescript block of README.md — found when the test runs, so blocks added later
// are checked too — must pass `deno check` and `deno lint` as a user would copy it: in a project of
// its own whose import map points `@svc/cli` (and its sub-paths) at this checkout. Snippets that
// talk to a live server are type-checked, not run.
import { join } from "node:path";
import { assert, assertEquals } from "../_assert.ts";
import { ROOT } from "../cli/_run_cli.ts";

const README = await Deno.readTextFile(join(ROOT, "README.md"));
const CONFIG = JSON.parse(await Deno.readTextFile(join(ROOT, "deno.json")));
// The other packages snippets use (the official `openai`), as a user's project would add them.
const TEST_CONFIG = JSON.parse(await Deno.readTextFile(join(ROOT, "tests", "deno.json")));

/** The TypeScript blocks of a Markdown text, with the line each starts on. */
function typescriptBlocks(markdown: string): { line: number; code: string }[] {
  const blocks: { line: number; code: string }[] = [];
  const lines = markdown.split("\n");
  for (let i = 0; i < lines.length; i++) {
    if (!/^```(ts|typescript)\s*$/.test(lines[i])) continue;
    const end = lines.findIndex((l, j) => j > i && l.startsWith("```"));
    blocks.push({ line: i + 1, code: lines.slice(i + 1, end).join("\n") + "\n" });
    i = end;
  }
  return blocks;
}

async function deno(args: string[], cwd: string) {
  const output = await new Deno.Command(Deno.execPath(), {
    args,
    cwd,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(output.stdout) + new TextDecoder().decode(output.stderr);
  return { code: output.code, text };
}

Deno.test("the README's TypeScript snippets pass deno check and deno lint", async () => {
  const blocks = typescriptBlocks(README);
  assert(blocks.length >= 3, `only ${blocks.length} TypeScript blocks found in README.md`);
  const project = await Deno.makeTempDir({ prefix: "svc_readme_" });
  try {
    // The package's entries under its own name, as `deno add jsr:@svc/cli` would give them.
    const imports: Record<string, string> = { ...TEST_CONFIG.imports, ...CONFIG.imports };
    for (const [sub, path] of Object.entries<string>(CONFIG.exports)) {
      imports[sub === "." ? CONFIG.name : `${CONFIG.name}${sub.slice(1)}`] = join(ROOT, path);
    }
    await Deno.writeTextFile(
      join(project, "deno.json"),
      JSON.stringify({ imports, compilerOptions: CONFIG.compilerOptions }),
    );
    const files = blocks.map((b) => `readme_line_${b.line}.ts`);
    await Promise.all(blocks.map((b, i) => Deno.writeTextFile(join(project, files[i]), b.code)));
    const check = await deno(["check", "--quiet", ...files], project);
    assertEquals(
      check.code,
      0,
      `deno check of README snippets (file = README line):\n${check.text}`,
    );
    const lint = await deno(["lint", "--quiet", ...files], project);
    assertEquals(lint.code, 0, `deno lint of README snippets (file = README line):\n${lint.text}`);
  } finally {
    await Deno.remove(project, { recursive: true });
  }
});
