// Helper process for model_registry_test.ts (not a test itself):
//   deno run <perms> _registry_writer.ts <manifest> <prefix> <count> <go-file> [hold]
// Waits until <go-file> exists (so writers start together), then registers <count> models.
// With "hold", instead takes the registry lock and exits while holding it (a crashed writer).
import { ModelRegistry } from "../../src/core/model_registry.ts";
import { withFileLock } from "../../src/core/_file_lock.ts";

const [manifest, prefix, count, goFile, mode] = Deno.args;
while (true) {
  try {
    await Deno.stat(goFile);
    break;
  } catch {
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}
if (mode === "hold") {
  await withFileLock(`${manifest}.lock`, () => {
    console.log("holding");
    Deno.exit(0);
  });
}
const registry = new ModelRegistry(manifest, { timeoutMs: 60_000 });
for (let i = 0; i < Number(count); i++) {
  await registry.register({
    id: `${prefix}/model-${i}`,
    path: `/models/${prefix}/${i}`,
    sizeBytes: i,
  });
}
console.log("done");
