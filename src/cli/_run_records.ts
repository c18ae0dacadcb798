/**
 * Records of the running `svc llm run` processes (`<SVC_HOME>/engines/runs/*.json`): which models
 * each serves and where, so `svc llm model delete` can refuse to pull files from under one. Each
 * process holds an OS lock on its record for its whole life, so a record whose lock can be taken
 * belongs to a process that died (even by SIGKILL): it is ignored and removed. The lock needs no
 * `--allow-run`, which reading pids and start times would.
 *
 * @module
 */
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";

/** A model as a running engine named it. */
export interface RunModel {
  /** The id or folder it was given (`org/name`, `demo/chat`, a path). */
  name: string;
  /** The absolute folder, when `name` is a local folder. */
  folder?: string;
}

/** What a record holds. */
export interface RunRecord {
  pid: number;
  /** The process that started it (a gateway, for an engine it supervises). */
  parentPid: number;
  /** Started by a gateway's supervisor (`svc llm serve`, `svc llm gateway`), not by hand. */
  supervised: boolean;
  /** `http://host:port/v1`. */
  url: string;
  models: RunModel[];
  startedAt: string;
}

/** A process's own record, kept locked until {@link RunRecordHandle.close}. */
export interface RunRecordHandle {
  /** Replaces the record's models (once loaded, their final ids are known). */
  update(models: readonly string[]): Promise<void>;
  /** Removes the record and drops its lock. */
  close(): Promise<void>;
}

/** The folder of the records under the `engines` output folder. */
export function runRecordsDir(enginesDir: string): string {
  return join(enginesDir, "runs");
}

/** A model name as recorded: with its absolute folder when it is a local one. */
export function runModel(name: string): RunModel {
  // As the engine decides (resolveModelFolder): demo ids are generated, existing paths are folders.
  try {
    if (!name.startsWith("demo/") && existsSync(name)) return { name, folder: resolve(name) };
  } catch {
    // Not readable to this process: not a folder it serves either.
  }
  return { name };
}

/**
 * Writes this process's record and locks it. Each write goes to a locked temporary file renamed
 * over the record, so a reader never sees a half-written or unlocked record of a live process.
 *
 * @example
 * ```ts
 * import { recordRun } from "./_run_records.ts";
 * const record = await recordRun("/tmp/svc/engines", {
 *   url: "http://127.0.0.1:8001/v1", models: ["demo/chat"], supervised: false,
 * });
 * await record.close();
 * ```
 */
export async function recordRun(
  enginesDir: string,
  init: { url: string; models: readonly string[]; supervised: boolean },
): Promise<RunRecordHandle> {
  const dir = runRecordsDir(enginesDir);
  await Deno.mkdir(dir, { recursive: true });
  // The pid alone may repeat across containers sharing one SVC_HOME.
  const path = join(dir, `${Deno.pid}-${crypto.randomUUID().slice(0, 8)}.json`);
  const base = {
    pid: Deno.pid,
    parentPid: Deno.ppid,
    supervised: init.supervised,
    url: init.url,
    startedAt: new Date().toISOString(),
  };
  let held: Deno.FsFile | undefined;
  const write = async (models: readonly string[]) => {
    const record: RunRecord = { ...base, models: models.map(runModel) };
    const tmp = join(dir, `.${crypto.randomUUID()}.tmp`);
    const file = await Deno.open(tmp, { read: true, write: true, createNew: true });
    try {
      await file.lock(true);
      await file.write(new TextEncoder().encode(JSON.stringify(record)));
      await Deno.rename(tmp, path);
    } catch (err) {
      file.close();
      await Deno.remove(tmp).catch(() => {});
      throw err;
    }
    held?.close();
    held = file;
  };
  await write(init.models);
  return {
    update: write,
    close: async () => {
      await Deno.remove(path).catch(() => {});
      held?.close();
      held = undefined;
    },
  };
}

/**
 * The records of the `svc llm run` processes alive now; records of dead ones are removed on the
 * way (when the folder is writable). Nothing recorded, or no folder: an empty list.
 *
 * @example
 * ```ts
 * import { liveRunRecords } from "./_run_records.ts";
 * const running = await liveRunRecords("/tmp/svc/engines");
 * ```
 */
export async function liveRunRecords(enginesDir: string): Promise<RunRecord[]> {
  const dir = runRecordsDir(enginesDir);
  const out: RunRecord[] = [];
  let names: string[];
  try {
    names = (await Array.fromAsync(Deno.readDir(dir)))
      .filter((e) => e.isFile && e.name.endsWith(".json") && !e.name.startsWith("."))
      .map((e) => e.name);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return out;
    throw err;
  }
  for (const name of names) {
    const path = join(dir, name);
    let file: Deno.FsFile;
    try {
      file = await Deno.open(path, { read: true });
    } catch {
      continue; // removed since the listing: its process ended
    }
    try {
      if (await file.tryLock(true)) {
        await file.unlock();
        await Deno.remove(path).catch(() => {});
        continue;
      }
      const record = JSON.parse(await Deno.readTextFile(path)) as RunRecord;
      if (Array.isArray(record.models)) out.push(record);
    } catch {
      // Unreadable: nothing to say about it.
    } finally {
      file.close();
    }
  }
  return out;
}
