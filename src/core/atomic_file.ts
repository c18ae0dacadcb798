/**
 * Atomic file replacement: readers see the old or the new content, never a mix, and a crash
 * leaves no half-written file. Used by the model registry, the gateway's engine state file, env
 * files and the hub cache's small files.
 *
 * @module
 */

/** Options of {@link writeFileAtomic}. */
export interface WriteFileAtomicOptions {
  /** Permission bits of the new file, exactly (the umask does not apply), e.g. `0o600`. */
  mode?: number;
  /** Create the parent folders first (default false). */
  createDir?: boolean;
}

/**
 * Replaces `path` with `text` atomically: writes a temporary file in the same folder, flushes it
 * to disk, then renames it over `path` (and flushes the folder, where the platform allows). The
 * temporary file is removed when anything fails; the error is thrown as is.
 *
 * @example
 * ```ts
 * import { writeFileAtomic } from "@svc/cli";
 * await writeFileAtomic("/tmp/svc-example/state.json", "{}\n", { mode: 0o600, createDir: true });
 * ```
 */
export async function writeFileAtomic(
  path: string,
  text: string,
  options: WriteFileAtomicOptions = {},
): Promise<void> {
  const slash = Math.max(path.lastIndexOf("/"), path.lastIndexOf("\\"));
  const dir = slash >= 0 ? path.slice(0, slash) || "/" : ".";
  const base = slash >= 0 ? path.slice(slash + 1) : path;
  const tmp = `${dir}/.${base}.tmp-${Deno.pid}-${crypto.randomUUID().slice(0, 8)}`;
  const { mode } = options;
  try {
    if (options.createDir) await Deno.mkdir(dir, { recursive: true });
    const file = await Deno.open(tmp, { createNew: true, write: true, mode });
    try {
      if (mode !== undefined && Deno.build.os !== "windows") await Deno.chmod(tmp, mode & 0o7777);
      const bytes = new TextEncoder().encode(text);
      let written = 0;
      while (written < bytes.length) written += await file.write(bytes.subarray(written));
      await file.sync();
    } finally {
      file.close();
    }
    await Deno.rename(tmp, path);
  } catch (err) {
    await Deno.remove(tmp).catch(() => {});
    throw err;
  }
  await syncDir(dir);
}

async function syncDir(dir: string): Promise<void> {
  // Makes the rename itself durable; not every platform lets a folder be opened, hence best effort.
  try {
    const handle = await Deno.open(dir, { read: true });
    try {
      await handle.sync();
    } finally {
      handle.close();
    }
  } catch {
    // best effort
  }
}
