/**
 * `.env` files: parse (KEY=VALUE, `#` comments, single/double quotes, `export ` prefix), read, and
 * update keys in place atomically (temp file + rename) keeping every other line and comment.
 *
 * @module
 */

import { writeFileAtomic } from "../core/atomic_file.ts";
import { ConfigurationError, ValidationError } from "../core/errors.ts";
import { findEnvVariable, parseEnvValue } from "./env_vars.ts";

/** One assignment found in a `.env` text. */
interface EnvEntry {
  key: string;
  value: string;
  exported: boolean;
  /** First and last line (0-based, inclusive) the assignment spans. */
  startLine: number;
  endLine: number;
}

const KEY_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;
const ASSIGNMENT = /^(export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/;
const DOUBLE_QUOTE_ESCAPES: Record<string, string> = {
  n: "\n",
  r: "\r",
  t: "\t",
  '"': '"',
  "\\": "\\",
};

function syntaxError(source: string, line: number, what: string): ConfigurationError {
  return new ConfigurationError(`${source}:${line + 1}: ${what}; expected KEY=VALUE`, {
    code: "invalid_env_file",
  });
}

// Finds the closing quote of a value that starts at `rest[0]`; returns the decoded value and
// what follows the quote, or null when the quote is not closed on this text.
function readQuoted(rest: string): { value: string; after: string } | null {
  const quote = rest[0];
  let value = "";
  for (let i = 1; i < rest.length; i++) {
    const ch = rest[i];
    if (quote === '"' && ch === "\\" && i + 1 < rest.length) {
      const next = rest[i + 1];
      value += DOUBLE_QUOTE_ESCAPES[next] ?? `\\${next}`;
      i++;
    } else if (ch === quote) {
      return { value, after: rest.slice(i + 1) };
    } else {
      value += ch;
    }
  }
  return null;
}

function scanEnvText(text: string, source: string): { lines: string[]; entries: EnvEntry[] } {
  const lines = text.replace(/^\uFEFF/, "").split(/\r?\n/);
  const entries: EnvEntry[] = [];
  for (let i = 0; i < lines.length; i++) {
    const trimmed = lines[i].trim();
    if (trimmed === "" || trimmed.startsWith("#")) continue;
    const match = ASSIGNMENT.exec(trimmed);
    if (match === null) throw syntaxError(source, i, "this line is not an assignment");
    const [, exportPrefix, key, rawRest] = match;
    const start = i;
    let value: string;
    if (rawRest.startsWith('"') || rawRest.startsWith("'")) {
      // Quoted values may span lines; join until the closing quote.
      let rest = rawRest;
      let quoted = readQuoted(rest);
      while (quoted === null && i + 1 < lines.length) {
        i++;
        rest += "\n" + lines[i];
        quoted = readQuoted(rest);
      }
      if (quoted === null) throw syntaxError(source, start, `the quote of ${key} is not closed`);
      const after = quoted.after.trim();
      if (after !== "" && !after.startsWith("#")) {
        throw syntaxError(source, i, `unexpected text after the quoted value of ${key}`);
      }
      value = quoted.value;
    } else {
      // An unquoted value ends at a comment that follows whitespace.
      value = rawRest.replace(/(^|\s+)#.*$/, "").trim();
    }
    entries.push({
      key,
      value,
      exported: exportPrefix !== undefined,
      startLine: start,
      endLine: i,
    });
  }
  return { lines, entries };
}

/**
 * Parses the text of a `.env` file into a map; a later assignment of a key wins. Values are not
 * interpolated. Throws `ConfigurationError` with `source:line` for a malformed line.
 *
 * @example
 * ```ts
 * import { parseEnvText } from "@svc/cli";
 * console.log(parseEnvText('export A=1 # note\nB="two words"\n')); // { A: "1", B: "two words" }
 * ```
 */
export function parseEnvText(text: string, source = ".env"): Record<string, string> {
  const result: Record<string, string> = {};
  for (const entry of scanEnvText(text, source).entries) result[entry.key] = entry.value;
  return result;
}

function permissionError(kind: "read" | "write", path: string, cause: unknown): ConfigurationError {
  return new ConfigurationError(
    `no permission to ${kind} ${path}: run with --allow-${kind} (or --allow-${kind}=${path})`,
    { cause, code: "permission_denied" },
  );
}

/**
 * Reads and parses a `.env` file. A missing file gives `null` (it is optional).
 *
 * @example
 * ```ts
 * import { readEnvFile } from "@svc/cli";
 * const values = await readEnvFile(".env");
 * console.log(values?.SVC_LLM_PORT);
 * ```
 */
export async function readEnvFile(path: string): Promise<Record<string, string> | null> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return null;
    if (err instanceof Deno.errors.NotCapable) throw permissionError("read", path, err);
    throw new ConfigurationError(`cannot read ${path}: ${(err as Error).message}`, { cause: err });
  }
  return parseEnvText(text, path);
}

/** Synchronous form of {@link readEnvFile}. */
export function readEnvFileSync(path: string): Record<string, string> | null {
  let text: string;
  try {
    text = Deno.readTextFileSync(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return null;
    if (err instanceof Deno.errors.NotCapable) throw permissionError("read", path, err);
    throw new ConfigurationError(`cannot read ${path}: ${(err as Error).message}`, { cause: err });
  }
  return parseEnvText(text, path);
}

/**
 * Formats one value for a `.env` file: bare when it is plain, else double-quoted with escapes,
 * so that {@link parseEnvText} gives back exactly the same string.
 */
export function formatEnvValue(value: string): string {
  if (/^[A-Za-z0-9_./:@,+=%-]*$/.test(value)) return value;
  const escaped = value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n")
    .replace(/\r/g, "\\r").replace(/\t/g, "\\t");
  return `"${escaped}"`;
}

/** A value {@link updateEnvFile} writes; `null`/`undefined` removes the key. */
export type EnvFileValue = string | number | boolean | null | undefined;

/**
 * Sets (or, with `null`, removes) keys in a `.env`-style file, keeping every other line, comment
 * and the `export ` prefix of the lines it changes; new keys are appended. The file is replaced
 * atomically (written to a temp file in the same folder, then renamed), keeps its mode (new files
 * get 0600: they hold secrets) and its folder is created when missing. Values of Svc's own
 * variables are validated first (`ConfigurationError`); a bad key name is a `ValidationError`.
 * Two processes updating the same file at once: the last rename wins.
 *
 * @example
 * ```ts
 * import { updateEnvFile } from "@svc/cli";
 * await updateEnvFile(".svc/engines/serve.env", { SVC_LLM_PORT: 8901, SVC_EMBEDDING_PORT: 8090 });
 * ```
 */
export async function updateEnvFile(
  path: string,
  values: Readonly<Record<string, EnvFileValue>>,
): Promise<void> {
  const updates = new Map<string, string | null>();
  for (const [key, raw] of Object.entries(values)) {
    if (!KEY_PATTERN.test(key)) {
      throw new ValidationError(`${JSON.stringify(key)} is not a valid variable name`, {
        param: key,
      });
    }
    const text = raw === null || raw === undefined ? null : String(raw);
    const known = findEnvVariable(key);
    if (known !== undefined && text !== null && text !== "") {
      parseEnvValue(known, text, "value of");
    }
    updates.set(key, text);
  }

  let original = "";
  let mode: number | null = null;
  try {
    original = await Deno.readTextFile(path);
    mode = (await Deno.stat(path)).mode;
  } catch (err) {
    if (err instanceof Deno.errors.NotCapable) throw permissionError("read", path, err);
    if (!(err instanceof Deno.errors.NotFound)) {
      throw new ConfigurationError(`cannot read ${path}: ${(err as Error).message}`, {
        cause: err,
      });
    }
  }

  const eol = original.includes("\r\n") ? "\r\n" : "\n";
  const { lines, entries } = scanEnvText(original, path);
  const replaced = new Map<number, string | null>(); // start line -> new text (null: drop)
  const dropped = new Set<number>();
  const written = new Set<string>();
  for (const entry of entries) {
    if (!updates.has(entry.key)) continue;
    const value = updates.get(entry.key) ?? null;
    const first = !written.has(entry.key);
    written.add(entry.key);
    const prefix = entry.exported ? "export " : "";
    replaced.set(
      entry.startLine,
      first && value !== null ? `${prefix}${entry.key}=${formatEnvValue(value)}` : null,
    );
    for (let i = entry.startLine + 1; i <= entry.endLine; i++) dropped.add(i);
  }
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (dropped.has(i)) continue;
    if (replaced.has(i)) {
      const text = replaced.get(i);
      if (text !== null && text !== undefined) out.push(text);
      continue;
    }
    out.push(lines[i]);
  }
  // split() leaves one "" after a final newline; drop it, append, then end with a newline.
  while (out.length > 0 && out[out.length - 1] === "") out.pop();
  for (const [key, value] of updates) {
    if (!written.has(key) && value !== null) out.push(`${key}=${formatEnvValue(value)}`);
  }
  const content = out.length === 0 ? "" : out.join(eol) + eol;

  try {
    await writeFileAtomic(path, content, { mode: mode ?? 0o600, createDir: true });
  } catch (err) {
    if (err instanceof Deno.errors.NotCapable) throw permissionError("write", path, err);
    throw new ConfigurationError(`cannot write ${path}: ${(err as Error).message}`, { cause: err });
  }
}
