/**
 * Keeps freed memory for reuse in engine processes. Key/value caches are megabyte-sized arrays,
 * made and dropped every prefill and prefix-cache lookup; by default glibc's malloc serves each
 * from fresh pages (mmap) and returns them on free, so every new cache pays the kernel's page
 * faults: ~70 ms for the 67 MB of a 1,500-token prefix of a SmolLM2-135M-shaped model here,
 * against ~20 ms when the pages are reused (bench/RESULTS.md). Raising malloc's mmap and trim
 * thresholds keeps those pages in the heap. Linux with glibc only; elsewhere nothing changes.
 *
 * @module
 */

import { getLogger } from "../core/logging.ts";

// mallopt(3) parameters.
const M_TRIM_THRESHOLD = -1;
const M_TOP_PAD = -2;
const M_MMAP_THRESHOLD = -3;

let tuned: boolean | undefined;

/**
 * Sets glibc's malloc to serve allocations under 32 MiB from the heap and to keep up to 256 MiB
 * of freed heap before returning it to the system. Once per process; true when it took effect.
 */
export function tuneAllocator(): boolean {
  if (tuned !== undefined) return tuned;
  tuned = false;
  if (
    Deno.build.os !== "linux" || Deno.permissions.querySync({ name: "ffi" }).state !== "granted"
  ) {
    return tuned;
  }
  try {
    const libc = Deno.dlopen("libc.so.6", {
      mallopt: { parameters: ["i32", "i32"], result: "i32" },
    });
    try {
      const { mallopt } = libc.symbols;
      tuned = mallopt(M_MMAP_THRESHOLD, 32 << 20) === 1 &&
        mallopt(M_TRIM_THRESHOLD, 256 << 20) === 1 &&
        mallopt(M_TOP_PAD, 16 << 20) === 1;
    } finally {
      libc.close();
    }
  } catch (err) {
    // Not glibc (musl has no mallopt), or no libc.so.6: the defaults stay.
    getLogger("engine.runtime").debug("malloc left at its defaults", { reason: String(err) });
  }
  return tuned;
}
