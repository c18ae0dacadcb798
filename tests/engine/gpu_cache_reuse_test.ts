// A decoder's cache read back from the GPU goes into the next run from the GPU (no upload), and
// computes exactly what an upload of the same values computes; so does a prefix-cache hit, put
// together on the GPU from blocks kept there. Any adapter will do, the software one (llvmpipe)
// included.
import { assert, assertEquals } from "../_assert.ts";
import { runProbe } from "../_helpers/run_probe.ts";
import { probeGpu } from "../_helpers/gpu_adapter.ts";

interface Runs {
  /** Each run's cache inputs fed from the GPU and uploaded from memory. */
  runs: { gpu: number; uploaded: number }[];
}
interface Answer {
  token: string;
  logprob: number;
}
interface ProbeResult {
  direct: Runs & { fromGpu: number[]; uploaded: number[]; againLater: number[] };
  engine: Runs & { text: string };
  /** Each prompt's answer without and with the prefix cache, and the latter's first run. */
  prefix: { off: Answer[]; on: Answer[]; firstRun: { gpu: number; uploaded: number } }[];
  stats: { hits: number; hitTokens: number };
}

const adapter = (await probeGpu()).info;

Deno.test({
  name: "webgpu: the cache a run read back feeds the next run from the GPU, with equal results",
  ignore: adapter === null,
  fn: async () => {
    const [{ direct, engine, prefix, stats }] = await runProbe<ProbeResult>(
      new URL("./_gpu_cache_reuse_probe.ts", import.meta.url),
      [],
    );
    const layers = direct.runs[0].uploaded;
    assert(layers > 0, JSON.stringify(direct.runs));
    const fromGpu = { gpu: layers, uploaded: 0 };
    const upload = { gpu: 0, uploaded: layers };
    // prefill; a step on the very arrays read back; one on copies; the arrays again, a run later.
    assertEquals(direct.runs, [upload, fromGpu, upload, upload]);
    assertEquals(direct.fromGpu, direct.uploaded);
    assertEquals(direct.againLater, direct.uploaded);
    // The engine's prefill, then its decode loop: the first step takes the prefill's cache.
    assert(engine.text.length > 0 && engine.runs.length > 2, JSON.stringify(engine));
    assertEquals(engine.runs.slice(1), engine.runs.slice(1).map(() => fromGpu));
    // The prefix cache: nothing cached, then hits of 149, 100 and 150 tokens, each prefilled
    // from a cache put together on the GPU out of the blocks kept there, answering as without it.
    assertEquals(prefix.map((p) => p.firstRun), [upload, fromGpu, fromGpu, fromGpu]);
    assertEquals({ hits: stats.hits, hitTokens: stats.hitTokens }, { hits: 3, hitTokens: 399 });
    for (const { off, on } of prefix) {
      assertEquals(on.map((t) => t.token), off.map((t) => t.token));
      on.forEach((t, i) => assert(Math.abs(t.logprob - off[i].logprob) < 1e-4, `${t.logprob}`));
    }
  },
});
