/**
 * Small helpers shared by the CLI commands: the model registry at its configured place, sizes of
 * folders on disk, and writing to stdout without a trailing newline.
 *
 * @module
 */

import { isAbsolute, join, relative, resolve, sep } from "node:path";
import type { OutputPaths } from "../config/output_paths.ts";
import {
  getDefaultRegistry,
  type ModelRegistry,
  setDefaultRegistryPath,
} from "../core/model_registry.ts";

/** The model registry of these output paths (`<models>/registry.json`). */
export function openRegistry(paths: OutputPaths): ModelRegistry {
  setDefaultRegistryPath(paths.models);
  return getDefaultRegistry();
}

/** One file under a folder. */
export interface FileOnDisk {
  /** Path relative to the folder, `/`-separated. */
  path: string;
  size: number;
}

/**
 * The files under `path` (a folder, or a single file) with their sizes, sorted by path; an empty
 * list when nothing is there. Symbolic links are not followed.
 */
export async function filesOnDisk(path: string): Promise<FileOnDisk[]> {
  const out: FileOnDisk[] = [];
  let info: Deno.FileInfo;
  try {
    info = await Deno.lstat(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return out;
    throw err;
  }
  if (info.isFile) return [{ path: path.split(sep).pop()!, size: info.size }];
  const walk = async (dir: string): Promise<void> => {
    for await (const entry of Deno.readDir(dir)) {
      const full = join(dir, entry.name);
      if (entry.isDirectory) await walk(full);
      else if (entry.isFile) {
        out.push({
          path: relative(path, full).split(sep).join("/"),
          size: (await Deno.stat(full)).size,
        });
      }
    }
  };
  await walk(path);
  return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** Total size in bytes of the files under `path` (0 when nothing is there). */
export async function sizeOnDisk(path: string): Promise<number> {
  return (await filesOnDisk(path)).reduce((sum, f) => sum + f.size, 0);
}

/** True when `child` is `parent` or lies inside it (after resolving both). */
export function isInside(child: string, parent: string): boolean {
  const rel = relative(resolve(parent), resolve(child));
  return rel === "" || (rel !== ".." && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

const encoder = new TextEncoder();

/** Writes `text` to stdout as is (no newline added), all of it. */
export function writeStdout(text: string): void {
  const bytes = encoder.encode(text);
  let offset = 0;
  while (offset < bytes.length) offset += Deno.stdout.writeSync(bytes.subarray(offset));
}

/** Writes `text` to stderr as is (no newline added). */
export function writeStderr(text: string): void {
  const bytes = encoder.encode(text);
  let offset = 0;
  while (offset < bytes.length) offset += Deno.stderr.writeSync(bytes.subarray(offset));
}
