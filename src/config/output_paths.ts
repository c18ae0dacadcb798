/**
 * Where Svc writes: one base folder with sub-folders for logs, caches, models, hub downloads,
 * engine state, benchmarks and fine-tuning output.
 *
 * Base folder: SVC_HOME when set (`~` expands, relative paths resolve against the current
 * folder); else `.svc` in the current folder when that folder is a project (it has deno.json,
 * deno.jsonc or already a .svc) and is writable; else `.svc` in the home folder.
 *
 * @module
 */

import { accessSync, constants, existsSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import { ConfigurationError, ValidationError } from "../core/errors.ts";
import { type EnvMap, loadConfig, readEnvVariable } from "./env.ts";

/** A sub-folder Svc itself uses. */
export type OutputDirName =
  | "logs"
  | "cache"
  | "models"
  | "hub"
  | "engines"
  | "benchmarks"
  | "fine_tune";
/** The sub-folders Svc itself uses. Other safe relative names (e.g. "engines/llm") work too. */
export const OUTPUT_DIR_NAMES: readonly OutputDirName[] = Object.freeze([
  "logs",
  "cache",
  "models",
  "hub",
  "engines",
  "benchmarks",
  "fine_tune",
]);

/** Name of the project-local / home base folder. */
export const OUTPUT_BASE_FOLDER = ".svc";

/** Options of the output-path functions; every one is optional. */
export interface OutputPathsOptions {
  /** Stands in for the process environment (SVC_HOME, HOME, USERPROFILE). */
  env?: EnvMap;
  /** `.env` file passed to `loadConfig` (null: none). */
  envFile?: string | null;
  /** Current folder (default `Deno.cwd()`). */
  cwd?: string;
  /** Home folder (default HOME, then USERPROFILE). */
  home?: string;
}

function lookupHome(options: OutputPathsOptions): string | undefined {
  if (options.home !== undefined) return options.home;
  for (const name of ["HOME", "USERPROFILE"]) {
    try {
      const value = readEnvVariable(name, { env: options.env });
      if (value !== undefined && value !== "") return value;
    } catch {
      // no permission for this one: try the next
    }
  }
  return undefined;
}

function requireHome(options: OutputPathsOptions): string {
  const home = lookupHome(options);
  if (home === undefined) {
    throw new ConfigurationError(
      "cannot find a home folder (HOME/USERPROFILE unset): set SVC_HOME to the output folder",
      { param: "SVC_HOME" },
    );
  }
  return home;
}

function isProjectFolder(dir: string): boolean {
  try {
    const marked = ["deno.json", "deno.jsonc", OUTPUT_BASE_FOLDER].some((name) =>
      existsSync(join(dir, name))
    );
    if (!marked) return false;
    accessSync(dir, constants.W_OK);
    return true;
  } catch {
    return false; // not writable, or no permission to look
  }
}

/**
 * The base output folder, by the rule in the module doc.
 *
 * @example
 * ```ts
 * import { resolveOutputBase } from "./output_paths.ts";
 * console.log(resolveOutputBase({ env: { SVC_HOME: "/data/svc" }, envFile: null })); // /data/svc
 * ```
 */
export function resolveOutputBase(options: OutputPathsOptions = {}): string {
  const cwd = options.cwd ?? Deno.cwd();
  const home = loadConfig({ env: options.env, envFile: options.envFile }).home;
  if (home !== undefined) {
    if (home === "~" || home.startsWith("~/") || home.startsWith("~\\")) {
      return join(requireHome(options), home.slice(1));
    }
    return resolve(cwd, home);
  }
  if (isProjectFolder(cwd)) return join(cwd, OUTPUT_BASE_FOLDER);
  return join(requireHome(options), OUTPUT_BASE_FOLDER);
}

/** Checks that `name` is a safe relative sub-folder name; returns its segments. */
function safeSegments(name: string): string[] {
  const bad = (why: string): never => {
    throw new ValidationError(
      `output folder name ${JSON.stringify(name)} ${why}: use a relative name like "logs"`,
      { param: "name" },
    );
  };
  if (typeof name !== "string" || name.trim() === "") return bad("is empty");
  if (isAbsolute(name) || /^[A-Za-z]:/.test(name) || /^[\\/]/.test(name)) {
    return bad("is an absolute path");
  }
  if (name.includes("\0")) return bad("contains a NUL character");
  const segments = name.split(/[\\/]+/).filter((s) => s !== "");
  if (segments.some((s) => s === "." || s === "..")) return bad("contains '.' or '..'");
  return segments;
}

/**
 * The output folders of one base.
 *
 * @example
 * ```ts
 * import { OutputPaths } from "@svc/cli";
 * const paths = OutputPaths.resolve();
 * console.log(paths.logs, paths.dir("engines"));
 * ```
 */
export class OutputPaths {
  /** Absolute base folder. */
  readonly base: string;

  /** Uses `base` (resolved against the current folder when relative). */
  constructor(base: string) {
    this.base = resolve(base);
  }

  /** The output paths for the base chosen by {@link resolveOutputBase}. */
  static resolve(options: OutputPathsOptions = {}): OutputPaths {
    return new OutputPaths(resolveOutputBase(options));
  }

  /** Log files. */
  get logs(): string {
    return this.dir("logs");
  }
  /** General caches. */
  get cache(): string {
    return this.dir("cache");
  }
  /** Local model folders. */
  get models(): string {
    return this.dir("models");
  }
  /** Model-hub download cache. */
  get hub(): string {
    return this.dir("hub");
  }
  /** State and config files of `svc llm serve`. */
  get engines(): string {
    return this.dir("engines");
  }
  /** Benchmark results. */
  get benchmarks(): string {
    return this.dir("benchmarks");
  }
  /** Fine-tuning output. */
  get fineTune(): string {
    return this.dir("fine_tune");
  }

  /** Path of sub-folder `name` (not created). Unsafe names raise `ValidationError`. */
  dir(name: string): string {
    return join(this.base, ...safeSegments(name));
  }

  /** Creates sub-folder `name` (mkdir -p) and returns its path. */
  async ensure(name: string): Promise<string> {
    const path = this.dir(name);
    try {
      await Deno.mkdir(path, { recursive: true });
    } catch (err) {
      if (err instanceof Deno.errors.NotCapable) {
        throw new ConfigurationError(
          `no permission to create ${path}: run with --allow-write (or set SVC_HOME elsewhere)`,
          { cause: err, param: "SVC_HOME" },
        );
      }
      throw new ConfigurationError(
        `cannot create output folder ${path}: ${(err as Error).message}; set SVC_HOME to a ` +
          `writable folder`,
        { cause: err, param: "SVC_HOME" },
      );
    }
    return path;
  }
}

/**
 * Path of output sub-folder `name` (e.g. "logs", "engines"), not created.
 *
 * @example
 * ```ts
 * import { getOutputDir } from "@svc/cli";
 * console.log(getOutputDir("logs")); // e.g. /home/me/project/.svc/logs
 * ```
 */
export function getOutputDir(name: string, options: OutputPathsOptions = {}): string {
  return OutputPaths.resolve(options).dir(name);
}

/**
 * Creates output sub-folder `name` when missing (mkdir -p) and returns its path.
 *
 * @example
 * ```ts
 * import { ensureOutputDir } from "@svc/cli";
 * console.log(await ensureOutputDir("logs"));
 * ```
 */
export async function ensureOutputDir(
  name: string,
  options: OutputPathsOptions = {},
): Promise<string> {
  return await OutputPaths.resolve(options).ensure(name);
}
