// The on-disk form of the model registry: parsing, validation, rendering. Private to src/core.

import { ValidationError } from "./errors.ts";
import type { ModelEntry, ModelSource } from "./model_registry.ts";

const FORMAT = "svc-model-registry";
const VERSION = 1;

/** Valid values of `ModelEntry.source`. */
export const SOURCES: readonly ModelSource[] = ["hub", "local", "demo", "fine-tune"];

/** Entries by id. */
export type Manifest = Map<string, ModelEntry>;

/** The manifest as a map, or a string saying what is wrong with it. */
export function tryParse(text: string, path: string): Manifest | string {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    return `not valid JSON (${(err as Error).message})`;
  }
  if (typeof data !== "object" || data === null || Array.isArray(data)) {
    return "the top level is not an object";
  }
  const doc = data as { format?: unknown; version?: unknown; models?: unknown };
  if (doc.format !== FORMAT) return `"format" is not "${FORMAT}" (is ${path} a registry?)`;
  if (doc.version !== VERSION) return `unsupported version ${JSON.stringify(doc.version)}`;
  if (!Array.isArray(doc.models)) return `"models" is not an array`;
  const models: Manifest = new Map();
  for (const [i, entry] of doc.models.entries()) {
    try {
      validateEntry(entry, `models[${i}]`);
    } catch (err) {
      return (err as Error).message;
    }
    const model = entry as ModelEntry;
    if (models.has(model.id)) return `models[${i}]: duplicate id '${model.id}'`;
    models.set(model.id, model);
  }
  return models;
}

export function render(models: Manifest): string {
  const sorted = [...models.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return JSON.stringify({ format: FORMAT, version: VERSION, models: sorted }, null, 2) + "\n";
}

export function validateEntry(entry: unknown, where: string): asserts entry is ModelEntry {
  const bad = (field: string, expected: string, got: unknown): never => {
    throw new ValidationError(`${where}.${field} must be ${expected}, got ${JSON.stringify(got)}`, {
      param: field,
    });
  };
  if (typeof entry !== "object" || entry === null) bad("", "an object", entry);
  const e = entry as { [key: string]: unknown };
  const id = e.id;
  if (typeof id !== "string" || id.trim() !== id || id === "" || hasControlChar(id)) {
    bad("id", "a non-empty string without surrounding spaces or control characters", e.id);
  }
  if (typeof e.path !== "string" || e.path === "") bad("path", "a non-empty string", e.path);
  if (!SOURCES.includes(e.source as ModelSource)) {
    bad("source", `one of ${SOURCES.join(", ")}`, e.source);
  }
  if (e.revision !== null && typeof e.revision !== "string") {
    bad("revision", "a string or null", e.revision);
  }
  if (!Number.isSafeInteger(e.sizeBytes) || (e.sizeBytes as number) < 0) {
    bad("sizeBytes", "a non-negative integer", e.sizeBytes);
  }
  if (e.lastUsed !== null && !isTime(e.lastUsed)) {
    bad("lastUsed", "a time in ms or null", e.lastUsed);
  }
  if (!isTime(e.addedAt)) bad("addedAt", "a time in ms", e.addedAt);
}

function hasControlChar(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) < 0x20) return true;
  return false;
}

function isTime(value: unknown): boolean {
  return Number.isSafeInteger(value) && (value as number) >= 0;
}
