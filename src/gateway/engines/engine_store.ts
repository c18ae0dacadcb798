/**
 * Persistence of the engines registered with the gateway's management API: one JSON file, written
 * atomically (temporary file in the same folder, flushed, renamed over the old one) with mode 0600
 * because it holds the remote engines' keys. A gateway that restarts reads it back, registers the
 * same remote engines again and starts the same engines again.
 *
 * @module
 */
import type { Dtype } from "../../engine/dtype.ts";
import { dirname } from "node:path";
import { writeFileAtomic } from "../../core/atomic_file.ts";
import { ConfigurationError, ConflictError } from "../../core/errors.ts";
import type { BackendInstanceConfig } from "../backend_config.ts";
import type { EngineKind } from "../../core/model_kind.ts";

/**
 * A registered remote engine as stored: the fields of its backend config (camelCase; the key in
 * clear, the file being readable by its owner only) but the extra headers.
 */
export interface StoredRemoteEngine extends Omit<BackendInstanceConfig, "headers"> {
  /** Registered, not started by us. */
  origin: "remote";
  /** Those of `models` it lists as rerankers (`kind: "rerank"`), when it said so. */
  rerankers?: string[];
  /** Those of `models` it lists with `random_weights: true` (demo models). */
  randomWeights?: string[];
  /** When it was registered, in seconds since the epoch. */
  createdAt: number;
}

/** An engine started through the management API, as stored: what it takes to start it again. */
export interface StoredManagedEngine {
  /** Started by the gateway. */
  origin: "managed";
  /** Engine id. */
  id: string;
  /** What it serves. */
  kind: EngineKind;
  /** null: the default model of the kind. */
  model: string | null;
  /** Device it was started on. */
  device?: string;
  /** Weights it loaded. */
  dtype?: Dtype;
  /** The port it had; taken again when free. */
  port: number;
  /** When it was started, in seconds since the epoch. */
  createdAt: number;
  /**
   * The identity of the gateway that started it, in a state store shared by gateways on several
   * hosts (gateway_identity.ts); absent in rows of older versions and in the JSON file.
   */
  gateway?: string;
}

/** One engine of the state file. */
export type StoredEngine = StoredRemoteEngine | StoredManagedEngine;

/**
 * Where the engine manager keeps its registrations: this JSON file, or the shared state store
 * (state_engine_store.ts), which also tells the manager of other replicas' changes.
 */
export interface EnginePersistence {
  /**
   * The stored engines. Unless `claimStarted` is false, the started ones (origin `managed`)
   * become this gateway's, to start again and to remove once stopped; a gateway that starts no
   * engines passes false and leaves them to the gateway that started them.
   */
  load(options?: { claimStarted?: boolean }): Promise<StoredEngine[]>;
  /** Replaces the stored engines of this gateway with `engines`. */
  save(engines: readonly StoredEngine[]): Promise<void>;
  /**
   * Calls `apply` with every stored engine whenever another writer changed them; returns a
   * function that stops watching. Absent where nobody else writes (the JSON file).
   */
  watch?(apply: (engines: StoredEngine[]) => void): () => void;
}

/**
 * A save found the id of an engine new to this gateway already in the store: another replica
 * sharing it saved an engine under that id first. A 409 like any conflict; the manager tries
 * another id when it made this one up.
 */
export class EngineIdTakenError extends ConflictError {
  /** The id that was taken. */
  readonly id: string;

  /** `conflict`: the store's refusal to write the row. */
  constructor(id: string, conflict: ConflictError) {
    super(conflict.message, { code: conflict.code, param: "id", cause: conflict });
    this.id = id;
  }
}

interface StoreFile {
  version: 1;
  engines: readonly StoredEngine[];
}

/**
 * Reads and writes the engine state file.
 *
 * @example
 * ```ts
 * import { EngineStore } from "@svc/cli/gateway";
 * const store = new EngineStore("/tmp/svc-engines.json");
 * await store.save([]);
 * console.log(await store.load()); // []
 * ```
 */
export class EngineStore implements EnginePersistence {
  /** Absolute or relative path of the state file. */
  readonly path: string;
  #writing: Promise<void> = Promise.resolve();

  /** A store kept in the file at `path`. */
  constructor(path: string) {
    this.path = path;
  }

  /** The stored engines; `[]` when the file does not exist yet. A corrupt file is an error. */
  async load(): Promise<StoredEngine[]> {
    let text: string;
    try {
      text = await Deno.readTextFile(this.path);
    } catch (err) {
      if (err instanceof Deno.errors.NotFound) return [];
      throw this.#ioError("read", err);
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (err) {
      throw new ConfigurationError(
        `the engine state file ${this.path} is not valid JSON (${(err as Error).message}); ` +
          "fix or delete it, then restart the gateway",
        { code: "invalid_state_file", cause: err },
      );
    }
    const file = parsed as Partial<StoreFile>;
    if (file?.version !== 1 || !Array.isArray(file.engines)) {
      throw new ConfigurationError(
        `the engine state file ${this.path} is not a version-1 state file; fix or delete it`,
        { code: "invalid_state_file" },
      );
    }
    return file.engines.filter((e) =>
      typeof e === "object" && e !== null && typeof e.id === "string" &&
      (e.origin === "remote" ||
        (e.origin === "managed" && (e.kind === "chat" || e.kind === "embedding")))
    );
  }

  /**
   * Replaces the file's content with `engines`. Writes are serialized: the last call wins, and a
   * reader sees a whole old or a whole new file, never a mix.
   */
  save(engines: readonly StoredEngine[]): Promise<void> {
    const text = JSON.stringify({ version: 1, engines } satisfies StoreFile, null, 2) + "\n";
    const next = this.#writing.catch(() => {}).then(() => this.#write(text));
    this.#writing = next;
    return next;
  }

  async #write(text: string): Promise<void> {
    try {
      await writeFileAtomic(this.path, text, { mode: 0o600, createDir: true });
    } catch (err) {
      throw this.#ioError("write", err);
    }
  }

  #ioError(what: "read" | "write", err: unknown): ConfigurationError {
    const flag = what === "read" ? "--allow-read" : "--allow-write";
    const hint = err instanceof Deno.errors.NotCapable
      ? `run with ${flag}=${dirname(this.path)}`
      : "check the folder's permissions or set SVC_HOME elsewhere";
    return new ConfigurationError(
      `cannot ${what} the engine state file ${this.path}: ${(err as Error).message}; ${hint}`,
      { cause: err, code: "state_file_error" },
    );
  }
}
