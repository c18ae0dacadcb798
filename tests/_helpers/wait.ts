/** Polls `condition` every 5 ms until it holds; throws after `timeoutMs` (default 2 s). */
export async function waitFor(
  condition: () => boolean,
  options: { timeoutMs?: number; what?: string } = {},
): Promise<void> {
  const deadline = Date.now() + (options.timeoutMs ?? 2000);
  while (!condition()) {
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${options.what ?? "a condition"}`);
    }
    await new Promise((r) => setTimeout(r, 5));
  }
}
