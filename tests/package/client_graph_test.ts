// The module graphs of the library entries (`@svc/cli`, `@svc/cli/client`, `@svc/cli/embedding`)
// — everything Deno or JSR would fetch and type-check for an application that imports them — hold
// no ML runtime: it loads only when a model runs in the process.
import { join } from "node:path";
import { assert } from "../_assert.ts";
import { ROOT } from "../cli/_run_cli.ts";

interface ModuleGraph {
  modules: { specifier: string }[];
  packages?: Record<string, string>;
}

async function moduleGraph(entry: string): Promise<ModuleGraph> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", join(ROOT, entry)],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (output.code !== 0) throw new Error(new TextDecoder().decode(output.stderr));
  return JSON.parse(new TextDecoder().decode(output.stdout));
}

const ML_RUNTIME = /@huggingface\/transformers|onnxruntime/;

Deno.test("the ., ./client and ./embedding entries' module graphs have no transformers.js or onnxruntime", async () => {
  for (const entry of ["mod.ts", "client.ts", "embedding.ts"]) {
    const graph = await moduleGraph(entry);
    const ml = graph.modules.map((m) => m.specifier).filter((s) => ML_RUNTIME.test(s));
    assert(ml.length === 0, `${entry} pulls in the ML runtime: ${ml.join(", ")}`);
  }
  // The check itself can fail: the engine entry's graph does hold them.
  const engine = await moduleGraph("engine.ts");
  assert(engine.modules.some((m) => ML_RUNTIME.test(m.specifier)), "engine.ts has no ML runtime?");
});
