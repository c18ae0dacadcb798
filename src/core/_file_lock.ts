// Cross-process file lock, used by the model registry (atomic replacement: atomic_file.ts).
// Private to src/core: the public surface is ModelRegistry.

import { ConflictError } from "./errors.ts";
import { sleep } from "./sleep.ts";

/** Options of {@link withFileLock}. */
export interface FileLockOptions {
  /** Give up after waiting this long for the lock (default 10000 ms). */
  timeoutMs?: number;
  /** A lock older than this is considered abandoned (default 30000 ms). */
  staleMs?: number;
}

interface LockContent {
  pid: number;
  token: string;
  time: number;
}

const decoder = new TextDecoder();

// The owner also holds an OS lock (flock) on the open lock file: the OS drops it when the owner
// dies, which tells a waiter the lock is abandoned. Because the owner takes it just after creating
// the file, a free OS lock only counts once the file is older than this grace period.
const OWNER_GRACE_MS = 1000;

/**
 * Runs `fn` while holding the lock file `lockPath`, created with `createNew` so exactly one
 * process holds it. Waits with jittered back-off. A lock is abandoned (and removed) when its owner
 * no longer holds the OS lock on it, its owner process is gone, or it is older than `staleMs`.
 */
export async function withFileLock<T>(
  lockPath: string,
  fn: () => Promise<T>,
  options: FileLockOptions = {},
): Promise<T> {
  const held = await acquire(lockPath, options.timeoutMs ?? 10_000, options.staleMs ?? 30_000);
  try {
    return await fn();
  } finally {
    await release(lockPath, held);
  }
}

interface HeldLock {
  token: string;
  file: Deno.FsFile;
}

async function acquire(lockPath: string, timeoutMs: number, staleMs: number): Promise<HeldLock> {
  const token = crypto.randomUUID();
  const deadline = Date.now() + timeoutMs;
  for (let attempt = 0;; attempt++) {
    const file = await createLockFile(lockPath);
    if (file !== null) {
      try {
        await file.lock(true);
        const content: LockContent = { pid: Deno.pid, token, time: Date.now() };
        await file.write(new TextEncoder().encode(JSON.stringify(content)));
        return { token, file };
      } catch (err) {
        file.close();
        await Deno.remove(lockPath).catch(() => {});
        throw err;
      }
    }
    const owner = await readLock(lockPath);
    if (owner !== null && await isStale(lockPath, owner, staleMs)) {
      await breakStaleLock(lockPath, owner);
      continue;
    }
    if (Date.now() >= deadline) {
      const who = owner?.pid ? `process ${owner.pid}` : "another process";
      throw new ConflictError(
        `could not lock ${lockPath} within ${timeoutMs} ms: it is held by ${who}. ` +
          "If no Svc process is running, delete that lock file and retry.",
        { code: "lock_timeout" },
      );
    }
    const delay = Math.min(100, 2 * 1.5 ** attempt) * (0.5 + Math.random());
    await sleep(delay);
  }
}

async function createLockFile(lockPath: string): Promise<Deno.FsFile | null> {
  try {
    return await Deno.open(lockPath, { createNew: true, write: true });
  } catch (err) {
    if (err instanceof Deno.errors.AlreadyExists) return null;
    throw err;
  }
}

/** Reads the lock's owner; `{}` when unreadable or being written, null when the lock is gone. */
async function readLock(lockPath: string): Promise<Partial<LockContent> | null> {
  let text: string;
  try {
    text = decoder.decode(await Deno.readFile(lockPath));
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return null;
    if (err instanceof Deno.errors.NotCapable) throw err;
    return {}; // e.g. Windows refuses to read a locked file
  }
  try {
    const parsed = JSON.parse(text);
    return typeof parsed === "object" && parsed !== null ? parsed : {};
  } catch {
    return {};
  }
}

async function isStale(
  lockPath: string,
  owner: Partial<LockContent>,
  staleMs: number,
): Promise<boolean> {
  let time = owner.time;
  if (typeof time !== "number") {
    // Not written yet (or garbage): judge by the file's age.
    try {
      time = (await Deno.stat(lockPath)).mtime?.getTime() ?? Date.now();
    } catch {
      return false;
    }
  }
  const age = Date.now() - time;
  if (age > staleMs) return true;
  if (typeof owner.pid === "number" && owner.pid !== Deno.pid && await pidGone(owner.pid)) {
    return true;
  }
  return age > OWNER_GRACE_MS && await ownerLockReleased(lockPath);
}

/** True only when the OS says so; reading /proc needs --allow-all in Deno, so often unknown. */
async function pidGone(pid: number): Promise<boolean> {
  if (Deno.build.os !== "linux") return false;
  try {
    await Deno.stat(`/proc/${pid}`);
    return false;
  } catch (err) {
    return err instanceof Deno.errors.NotFound;
  }
}

async function ownerLockReleased(lockPath: string): Promise<boolean> {
  let probe: Deno.FsFile;
  try {
    probe = await Deno.open(lockPath, { read: true });
  } catch {
    return false;
  }
  try {
    const free = await probe.tryLock(true);
    if (free) await probe.unlock();
    return free;
  } catch {
    return false;
  } finally {
    probe.close();
  }
}

/**
 * Removes a stale lock without ever removing a fresh one: the lock is first renamed to a private
 * name (atomic), then checked; if it turns out to be a new owner's lock, it is put back with
 * `link`, which fails rather than overwrite a lock created meanwhile.
 */
async function breakStaleLock(lockPath: string, stale: Partial<LockContent>): Promise<void> {
  const aside = `${lockPath}.stale-${crypto.randomUUID()}`;
  try {
    await Deno.rename(lockPath, aside);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return; // someone else already broke it
    throw err;
  }
  const taken = await readLock(aside);
  if (taken !== null && taken.token !== stale.token) {
    try {
      await Deno.link(aside, lockPath);
    } catch {
      // A third process holds the lock now; the one we moved lost it. Nothing safe to do.
    }
  }
  await Deno.remove(aside).catch(() => {});
}

async function release(lockPath: string, held: HeldLock): Promise<void> {
  try {
    const owner = await readLock(lockPath).catch(() => null);
    if (owner?.token === held.token) await Deno.remove(lockPath).catch(() => {});
  } finally {
    held.file.close(); // also drops the OS lock
  }
}
