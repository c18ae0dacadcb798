import { assertEquals } from "../_assert.ts";
import { loadRuntime } from "../../src/engine/runtime.ts";

Deno.test("native sessions: chat threads never spin, embedding and rerank threads spin only during a run", async () => {
  const runtime = await loadRuntime("cpu");
  const noSpin = { intra_op: { allow_spinning: "0" }, inter_op: { allow_spinning: "0" } };
  assertEquals(runtime.sessionOptions("cpu", "chat"), { extra: { session: noSpin } });
  for (const kind of ["embedding", "rerank"] as const) {
    assertEquals(runtime.sessionOptions("cpu", kind), {
      extra: {
        session: {
          intra_op: { allow_spinning: "1" },
          inter_op: { allow_spinning: "1" },
          force_spinning_stop: "1",
        },
      },
    });
  }
});
