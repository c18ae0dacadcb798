// Stopping an engine server while its model downloads cancels the download instead of waiting for
// it (Ctrl-C during `svc llm run` of a large model used to wait for the whole download). The hub
// stand-in serves a generated model so slowly that the download would take hours.
import { assert, assertRejects } from "../_assert.ts";
import { join } from "node:path";
import { CancelledError } from "../../src/core/errors.ts";
import { setupLogger } from "../../src/core/logging.ts";
import { materializeDemoModel } from "../../src/engine/generated_models/demo_models.ts";
import { startEngineServer } from "../../src/server/engine_server.ts";
import { startHubStandIn } from "../_helpers/hub_stand_in.ts";
import { waitFor } from "../_helpers/wait.ts";
import { TEST_MODEL_CACHE } from "../_helpers/demo_engines.ts";

setupLogger("error");

Deno.test("engine server: stop() while the model downloads cancels the download", async () => {
  const cacheDir = await Deno.makeTempDir({ prefix: "svc-cancel-" });
  const folder = await materializeDemoModel("demo/chat", TEST_MODEL_CACHE);
  // 1 KiB a minute: the files would take hours.
  const hub = startHubStandIn({
    repos: { "org/slow-model": folder },
    chunkSize: 1024,
    chunkDelayMs: 60_000,
  });
  try {
    const server = await startEngineServer({
      model: "org/slow-model",
      kind: "chat",
      hostname: "127.0.0.1",
      port: 0,
      device: "cpu",
      cacheDir: join(cacheDir, "hub"),
      hubEndpoint: hub.endpoint,
    });
    await waitFor(() => hub.requests.some((r) => r.path.includes("/resolve/")), {
      timeoutMs: 60_000,
      what: "the download to start",
    });
    await server.stop();
    await assertRejects(() => server.ready, CancelledError);
    assert(!hub.requests.some((r) => r.status >= 500), "the hub saw no failure");
  } finally {
    await hub.close();
    await Deno.remove(cacheDir, { recursive: true });
  }
});
