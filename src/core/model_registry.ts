/**
 * Model registry: a persistent JSON manifest of the models on this machine. Every change is made
 * under a cross-process lock, re-reads the manifest first (no lost updates when two processes
 * write), keeps the previous good manifest as `<manifest>.bak`, and replaces the manifest
 * atomically. A corrupted manifest is never written over and never copied to the backup.
 *
 * @example
 * ```ts
 * import { ModelRegistry } from "@svc/cli";
 * const registry = new ModelRegistry("/tmp/svc/models/registry.json");
 * await registry.register({ id: "demo/tiny-chat", path: "/tmp/svc/models/tiny", source: "demo" });
 * console.log(await registry.get("demo/tiny-chat"));
 * ```
 *
 * @module
 */

import { ConfigurationError, isAccessRefused, NotFoundError } from "./errors.ts";
import { type Manifest, render, SOURCES, tryParse, validateEntry } from "./_registry_manifest.ts";
import { withFileLock } from "./_file_lock.ts";
import { writeFileAtomic } from "./atomic_file.ts";

/** Where a model came from. */
export type ModelSource = "hub" | "local" | "demo" | "fine-tune";

/** The sources a {@link ModelEntry} may have. */
export const MODEL_SOURCES: readonly ModelSource[] = SOURCES;

/** One model in the registry. Times are milliseconds since the epoch. */
export interface ModelEntry {
  /** Model id, e.g. `org/name` for hub models. */
  id: string;
  /** Local folder (or file) holding the model. */
  path: string;
  /** Where it came from. */
  source: ModelSource;
  /** Hub revision (branch, tag or commit), null when not from the hub. */
  revision: string | null;
  /** Size on disk in bytes (0 when unknown). */
  sizeBytes: number;
  /** Last time it was used, null when never. */
  lastUsed: number | null;
  /** When it was first registered. */
  addedAt: number;
}

/** What {@link ModelRegistry.register} takes; omitted fields get defaults. */
export interface ModelEntryInit {
  /** Model id, e.g. `org/name`. */
  id: string;
  /** Local folder (or file) holding the model. */
  path: string;
  /** Default `local`. */
  source?: ModelSource;
  /** Hub revision; default null. */
  revision?: string | null;
  /** Default 0. */
  sizeBytes?: number;
  /** Last use in ms since the epoch; default null (or the existing entry's value). */
  lastUsed?: number | null;
}

/** Options of {@link ModelRegistry}. */
export interface ModelRegistryOptions {
  /** Give up waiting for another writer after this long (default 10000 ms). */
  timeoutMs?: number;
  /** Treat a lock older than this as abandoned (default 30000 ms). */
  staleMs?: number;
}

/** What {@link ModelRegistry.recover} did. */
export interface RecoveryResult {
  /** `none`: manifest was fine or absent; `restored`: from the backup; `reset`: started empty. */
  action: "none" | "restored" | "reset";
  /** Where the corrupted manifest was moved, when it was. */
  corruptCopy: string | null;
}

/**
 * A model manifest stored at `manifestPath` (a JSON file; its folder is created on first write).
 *
 * @example
 * ```ts
 * const registry = new ModelRegistry("./.svc/models/registry.json");
 * await registry.touch("demo/tiny-chat").catch(() => {});
 * ```
 */
export class ModelRegistry {
  #path: string;
  #options: ModelRegistryOptions;

  /** Opens (lazily) the registry whose manifest is `manifestPath`; nothing is read yet. */
  constructor(manifestPath: string, options: ModelRegistryOptions = {}) {
    if (typeof manifestPath !== "string" || manifestPath.length === 0) {
      throw new ConfigurationError("ModelRegistry needs the path of its manifest file");
    }
    this.#path = manifestPath;
    this.#options = options;
  }

  /** Path of the manifest file. */
  get manifestPath(): string {
    return this.#path;
  }

  /** Path of the backup of the last good manifest. */
  get backupPath(): string {
    return `${this.#path}.bak`;
  }

  /** Adds a model, or replaces the entry of the same id (keeping its `addedAt`). */
  async register(init: ModelEntryInit): Promise<ModelEntry> {
    const now = Date.now();
    const draft = {
      id: init?.id,
      path: init?.path,
      source: init?.source ?? "local",
      revision: init?.revision ?? null,
      sizeBytes: init?.sizeBytes ?? 0,
      lastUsed: init?.lastUsed ?? null,
      addedAt: now,
    };
    validateEntry(draft, "model");
    let saved = draft as ModelEntry;
    await this.#update((models) => {
      const old = models.get(saved.id);
      if (old !== undefined) {
        saved = { ...saved, addedAt: old.addedAt, lastUsed: init.lastUsed ?? old.lastUsed };
      }
      models.set(saved.id, saved);
      return true;
    });
    return saved;
  }

  /** The entry of `id`, or null when it is not registered. */
  async get(id: string): Promise<ModelEntry | null> {
    return (await this.#read()).get(id) ?? null;
  }

  /** All entries sorted by id, optionally only those of one source. */
  async list(options: { source?: ModelSource } = {}): Promise<ModelEntry[]> {
    const all = [...(await this.#read()).values()];
    return options.source === undefined ? all : all.filter((m) => m.source === options.source);
  }

  /** Removes `id`; returns whether it was registered. */
  async remove(id: string): Promise<boolean> {
    let removed = false;
    await this.#update((models) => (removed = models.delete(id)));
    return removed;
  }

  /** Sets `lastUsed` of `id` to `at` (default now). Raises `NotFoundError` for an unknown id. */
  async touch(id: string, at: number = Date.now()): Promise<ModelEntry> {
    let entry: ModelEntry | undefined;
    await this.#update((models) => {
      const old = models.get(id);
      if (old === undefined) {
        throw new NotFoundError(`model '${id}' is not in the registry ${this.#path}`, {
          param: "id",
        });
      }
      entry = { ...old, lastUsed: at };
      models.set(id, entry);
      return true;
    });
    return entry!;
  }

  /**
   * Repairs a corrupted manifest: moves it aside to `<manifest>.corrupt-<time>`, then restores
   * the backup when that is valid, else starts an empty registry. Does nothing to a valid one.
   */
  async recover(): Promise<RecoveryResult> {
    await this.#ensureDir();
    return await withFileLock(this.#lockPath, async () => {
      const text = await readText(this.#path);
      if (text === null || tryParse(text, this.#path) instanceof Map) {
        return { action: "none", corruptCopy: null } as RecoveryResult;
      }
      const corruptCopy = `${this.#path}.corrupt-${new Date().toISOString().replace(/[:.]/g, "-")}`;
      await Deno.rename(this.#path, corruptCopy);
      const backup = await readText(this.backupPath);
      if (backup !== null && tryParse(backup, this.backupPath) instanceof Map) {
        await writeFileAtomic(this.#path, backup);
        return { action: "restored", corruptCopy } as RecoveryResult;
      }
      await writeFileAtomic(this.#path, render(new Map()));
      return { action: "reset", corruptCopy } as RecoveryResult;
    }, this.#options);
  }

  get #lockPath(): string {
    return `${this.#path}.lock`;
  }

  async #read(): Promise<Manifest> {
    const text = await this.#guard(() => readText(this.#path));
    if (text === null) return new Map();
    const parsed = tryParse(text, this.#path);
    if (parsed instanceof Map) return parsed;
    throw await this.#corrupted(parsed);
  }

  /** Applies `change` to a fresh read of the manifest under the lock; writes if it returns true. */
  async #update(change: (models: Manifest) => boolean): Promise<void> {
    await this.#guard(() => this.#ensureDir());
    await this.#guard(() =>
      withFileLock(this.#lockPath, async () => {
        const text = await readText(this.#path);
        let models: Manifest = new Map();
        if (text !== null) {
          const parsed = tryParse(text, this.#path);
          if (!(parsed instanceof Map)) throw await this.#corrupted(parsed);
          models = parsed;
        }
        if (!change(models)) return;
        // Only a manifest that just parsed cleanly becomes the backup.
        if (text !== null) await writeFileAtomic(this.backupPath, text);
        await writeFileAtomic(this.#path, render(models));
      }, this.#options)
    );
  }

  /** Turns a missing Deno permission into an error that names the flag to add. */
  async #guard<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      if (!isAccessRefused(err)) {
        throw err;
      }
      const slash = this.#path.lastIndexOf("/");
      const dir = slash > 0 ? this.#path.slice(0, slash) : ".";
      throw new ConfigurationError(
        `the model registry cannot use ${this.#path}: ${(err as Error).message}. ` +
          `Run with --allow-read=${dir} --allow-write=${dir} (or choose a writable folder).`,
        { cause: err },
      );
    }
  }

  async #ensureDir(): Promise<void> {
    const slash = this.#path.lastIndexOf("/");
    if (slash > 0) await Deno.mkdir(this.#path.slice(0, slash), { recursive: true });
  }

  async #corrupted(reason: string): Promise<ConfigurationError> {
    const bak = this.backupPath;
    const backup = await readText(bak).catch(() => null);
    const hasGoodBackup = backup !== null && tryParse(backup, bak) instanceof Map;
    const advice = hasGoodBackup
      ? `The last good copy is ${bak}: restore it with \`cp '${bak}' '${this.#path}'\` ` +
        "(or call ModelRegistry.recover()). The backup is not touched while the manifest is corrupted."
      : `No valid backup exists at ${bak}: move '${this.#path}' aside to start an empty registry ` +
        "(or call ModelRegistry.recover()).";
    return new ConfigurationError(
      `model registry manifest ${this.#path} is corrupted: ${reason}. ${advice}`,
      { code: "registry_corrupted", param: this.#path },
    );
  }
}

async function readText(path: string): Promise<string | null> {
  try {
    return await Deno.readTextFile(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return null;
    throw err;
  }
}

let defaultRegistry: ModelRegistry | null = null;

/**
 * Sets where the default registry (used by {@link registerModel} and friends) keeps its manifest:
 * a path ending in `.json` is the manifest file itself; any other path is a folder that gets a
 * `registry.json`. The CLI calls this once from the configured output paths.
 *
 * @example
 * ```ts
 * setDefaultRegistryPath("/tmp/svc/models");
 * ```
 */
export function setDefaultRegistryPath(path: string, options: ModelRegistryOptions = {}): void {
  const file = path.endsWith(".json") ? path : `${path.replace(/\/+$/, "")}/registry.json`;
  defaultRegistry = new ModelRegistry(file, options);
}

/**
 * The default registry. Raises `ConfigurationError` when {@link setDefaultRegistryPath} was
 * never called.
 *
 * @example
 * ```ts
 * setDefaultRegistryPath("/tmp/svc/models");
 * getDefaultRegistry().manifestPath; // "/tmp/svc/models/registry.json"
 * ```
 */
export function getDefaultRegistry(): ModelRegistry {
  if (defaultRegistry === null) {
    throw new ConfigurationError(
      "the default model registry has no location: call setDefaultRegistryPath(path) first",
    );
  }
  return defaultRegistry;
}

/**
 * Registers a model in the default registry.
 *
 * @example
 * ```ts
 * await registerModel({ id: "org/model", path: "/models/org-model", source: "hub", revision: "main" });
 * ```
 */
export function registerModel(init: ModelEntryInit): Promise<ModelEntry> {
  return getDefaultRegistry().register(init);
}

/**
 * Looks a model up in the default registry (null when absent).
 *
 * @example
 * ```ts
 * const entry = await getModel("org/model");
 * ```
 */
export function getModel(id: string): Promise<ModelEntry | null> {
  return getDefaultRegistry().get(id);
}

/**
 * Lists the models of the default registry, sorted by id.
 *
 * @example
 * ```ts
 * for (const m of await listModels({ source: "hub" })) console.log(m.id);
 * ```
 */
export function listModels(options: { source?: ModelSource } = {}): Promise<ModelEntry[]> {
  return getDefaultRegistry().list(options);
}

/**
 * Removes a model from the default registry; returns whether it was there.
 *
 * @example
 * ```ts
 * await removeModel("org/model");
 * ```
 */
export function removeModel(id: string): Promise<boolean> {
  return getDefaultRegistry().remove(id);
}

/**
 * Marks a model of the default registry as used now.
 *
 * @example
 * ```ts
 * await touchModel("org/model");
 * ```
 */
export function touchModel(id: string): Promise<ModelEntry> {
  return getDefaultRegistry().touch(id);
}
