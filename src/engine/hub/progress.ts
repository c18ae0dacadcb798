/**
 * Progress events of a model download, shaped so a CLI can draw a progress bar from any single
 * event: every event carries the overall byte and file counts.
 *
 * @module
 */

/** Overall counts, present on every event. */
export interface HubProgressTotals {
  /** Repository id. */
  repo: string;
  /** Revision asked for. */
  revision: string;
  /** Bytes of the selected files present so far (downloaded, resumed or cached). Never decreases. */
  bytesDone: number;
  /** Sum of the selected files' sizes; null while a size is unknown. */
  bytesTotal: number | null;
  /** Files complete. */
  filesDone: number;
  /** Files selected for this model. */
  filesTotal: number;
}

/** Per-file fields of the file events. */
export interface HubFileProgress {
  /** Path inside the repository. */
  file: string;
  /** Bytes of this file present so far. Never decreases. */
  fileBytes: number;
  /** Size of this file; null when unknown. */
  fileTotal: number | null;
}

/**
 * One progress event:
 * - `start`: the file list is known;
 * - `file_start`: a file begins downloading (`fileBytes` > 0 when resuming a partial file);
 * - `file_progress`: bytes arrived (throttled);
 * - `file_done`: a file is complete (`cached` when it was already there);
 * - `done`: all files are in place.
 */
export type HubProgressEvent =
  | (HubProgressTotals & { kind: "start" })
  | (HubProgressTotals & HubFileProgress & { kind: "file_start" | "file_progress" })
  | (HubProgressTotals & HubFileProgress & { kind: "file_done"; cached: boolean })
  | (HubProgressTotals & { kind: "done"; path: string });

/** Receives progress events; exceptions it throws are not caught. */
export type HubProgressCallback = (event: HubProgressEvent) => void;

interface FileState {
  bytes: number;
  total: number | null;
}

/**
 * Keeps the counts of one download and emits {@link HubProgressEvent}s, throttling
 * `file_progress` to one per `intervalMs` and never letting a count go backwards (when a server
 * ignores a resume and sends the file from 0, the bar holds until it passes its old mark).
 *
 * @example
 * ```ts
 * import { DownloadProgress } from "./progress.ts";
 * const progress = new DownloadProgress("org/name", "main", [{ path: "config.json", size: 10 }], {
 *   onProgress: (e) => console.log(e.kind, e.bytesDone, e.bytesTotal),
 * });
 * progress.start();
 * progress.fileDone("config.json", 10, true);
 * ```
 */
export class DownloadProgress {
  #repo: string;
  #revision: string;
  #files = new Map<string, FileState>();
  #done = new Set<string>();
  #onProgress: HubProgressCallback | undefined;
  #intervalMs: number;
  #lastEmit = -Infinity;

  /** Starts counting for `files` (sizes from the listing, null when unknown). */
  constructor(
    repo: string,
    revision: string,
    files: { path: string; size: number | null }[],
    options: { onProgress?: HubProgressCallback; intervalMs?: number } = {},
  ) {
    this.#repo = repo;
    this.#revision = revision;
    for (const f of files) this.#files.set(f.path, { bytes: 0, total: f.size });
    this.#onProgress = options.onProgress;
    this.#intervalMs = options.intervalMs ?? 100;
  }

  /** Emits `start`. */
  start(): void {
    this.#emit({ kind: "start", ...this.#totals() });
  }

  /** A file starts downloading with `bytes` already present. */
  fileStart(file: string, bytes: number, total: number | null): void {
    const state = this.#update(file, bytes, total);
    this.#emit({ kind: "file_start", ...this.#totals(), ...this.#fileFields(file, state) });
  }

  /** `bytes` of a file are present now. */
  fileBytes(file: string, bytes: number, total: number | null): void {
    const before = this.#files.get(file)?.bytes ?? 0;
    const state = this.#update(file, bytes, total);
    if (state.bytes === before) return;
    const now = performance.now();
    if (now - this.#lastEmit < this.#intervalMs) return;
    this.#lastEmit = now;
    this.#emit({ kind: "file_progress", ...this.#totals(), ...this.#fileFields(file, state) });
  }

  /** A file is complete with `size` bytes. */
  fileDone(file: string, size: number, cached: boolean): void {
    const state = this.#update(file, size, size);
    this.#done.add(file);
    this.#emit({ kind: "file_done", cached, ...this.#totals(), ...this.#fileFields(file, state) });
  }

  /** Emits `done`. */
  done(path: string): void {
    this.#emit({ kind: "done", path, ...this.#totals() });
  }

  #update(file: string, bytes: number, total: number | null): FileState {
    let state = this.#files.get(file);
    if (state === undefined) {
      state = { bytes: 0, total: null };
      this.#files.set(file, state);
    }
    state.total ??= total;
    const capped = state.total === null ? bytes : Math.min(bytes, state.total);
    state.bytes = Math.max(state.bytes, capped);
    return state;
  }

  #fileFields(file: string, state: FileState): HubFileProgress {
    return { file, fileBytes: state.bytes, fileTotal: state.total };
  }

  #totals(): HubProgressTotals {
    let bytesDone = 0;
    let bytesTotal: number | null = 0;
    for (const s of this.#files.values()) {
      bytesDone += s.bytes;
      bytesTotal = bytesTotal === null || s.total === null ? null : bytesTotal + s.total;
    }
    return {
      repo: this.#repo,
      revision: this.#revision,
      bytesDone,
      bytesTotal,
      filesDone: this.#done.size,
      filesTotal: this.#files.size,
    };
  }

  #emit(event: HubProgressEvent): void {
    this.#onProgress?.(event);
  }
}
