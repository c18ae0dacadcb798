import { sleep } from "../../src/core/sleep.ts";
import { assert } from "../_assert.ts";

Deno.test("sleep() resolves after the delay when no signal is given", async () => {
  const start = performance.now();
  await sleep(20);
  assert(performance.now() - start >= 15);
});

Deno.test("sleep() resolves early, without rejecting, when the signal aborts", async () => {
  const ctrl = new AbortController();
  const start = performance.now();
  const pause = sleep(60_000, ctrl.signal);
  setTimeout(() => ctrl.abort(new Error("stop")), 5);
  await pause;
  assert(performance.now() - start < 5_000);
});

Deno.test("sleep() resolves at once when the signal has already aborted", async () => {
  await sleep(60_000, AbortSignal.abort());
});

Deno.test("sleep() treats a negative delay as zero", async () => {
  await sleep(-5);
});
