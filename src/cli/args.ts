/**
 * Argument parsing for the CLI commands: `node:util` parseArgs (JSR's @std/cli is unreachable
 * here) with errors turned into one clear line.
 *
 * @module
 */

import { parseArgs } from "node:util";
import { errorMessage, ValidationError } from "../core/errors.ts";
import { closestMatch } from "../core/suggest.ts";
import { dtypePreference } from "../engine/dtype.ts";
import {
  ADMISSION_LIMIT_FLAGS,
  type AdmissionLimits,
  DEFAULT_ADMISSION_LIMITS,
} from "../engine/admission_limits.ts";

/**
 * How the engines choose the weights when no dtype is named, for help texts (four lines, to
 * indent under an option).
 */
export const DTYPE_DEFAULT_HELP: string = [
  "(default: the first of these the model has files for;",
  ` cpu/wasm: ${dtypePreference("cpu").join(", ")}`,
  `           (cpu, local folders: q4 first when its MatMulNBits compute in int8)`,
  ` webgpu:   ${dtypePreference("webgpu").join(", ")})`,
].join("\n");

/** Option definitions, as node:util parseArgs takes them. */
export type OptionSpec = Record<
  string,
  { type: "string" | "boolean"; short?: string; multiple?: boolean; default?: string | boolean }
>;

/** Parsed arguments. */
export interface ParsedArgs {
  values: Record<string, string | boolean | string[] | undefined>;
  positionals: string[];
}

/** Parses `args` for `command`; unknown options and missing values raise a ValidationError. */
export function parseCommandArgs(
  args: string[],
  command: string,
  options: OptionSpec,
  allowPositionals = false,
): ParsedArgs {
  // A negative number after an option that takes a value is that value (`--port -1`), so the
  // option's own check can say it is out of range; node's parseArgs calls it ambiguous.
  const joined: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const name = /^--([^=]+)$/.exec(args[i])?.[1];
    const next = args[i + 1];
    if (
      name !== undefined && options[name]?.type === "string" && next !== undefined &&
      /^-(\d|\.\d)/.test(next)
    ) {
      joined.push(`--${name}=${next}`);
      i++;
    } else {
      if (args[i] === "--") {
        joined.push(...args.slice(i));
        break;
      }
      joined.push(args[i]);
    }
  }
  args = joined;
  try {
    const { values, positionals } = parseArgs({
      args,
      options: { ...options, help: { type: "boolean", short: "h" } },
      allowPositionals,
      strict: true,
    });
    return { values: values as ParsedArgs["values"], positionals };
  } catch (err) {
    const message = errorMessage(err);
    // "Option '--prompt' argument is ambiguous. Did you forget …": a value starting with a dash.
    const dashed = /^Option '(--[^']+)' argument is ambiguous/.exec(message)?.[1];
    if (dashed !== undefined) {
      const value = args[args.indexOf(dashed) + 1] ?? "-…";
      throw new ValidationError(
        `${command}: the value of ${dashed} starts with a dash ('${value}'); pass it as ` +
          `${dashed}=${value}, or give ${dashed} its value. Run '${command} --help' for usage.`,
      );
    }
    const reason = message.replace(/\.?\s*To specify.*$/s, "");
    const unknown = /^Unknown option '--([^'=]+)/.exec(String(reason))?.[1];
    const near = unknown && closestMatch(unknown, [...Object.keys(options), "help"]);
    const hint = near ? ` Did you mean '--${near}'?` : "";
    throw new ValidationError(`${command}: ${reason}.${hint} Run '${command} --help' for usage.`);
  }
}

/** Reads an integer option within bounds, or undefined when absent. */
export function intOption(
  values: ParsedArgs["values"],
  name: string,
  bounds: { min: number; max: number },
): number | undefined {
  const raw = values[name];
  if (raw === undefined) return undefined;
  if (raw === "") {
    throw new ValidationError(
      `--${name} has an empty value: expected a whole number from ${bounds.min} to ${bounds.max}`,
      { param: name },
    );
  }
  // Decimal digits only: Number() would also take '0x10', '1e3', '0b11' and ' 7 '.
  const n = typeof raw === "string" && /^-?[0-9]+$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(n) || n < bounds.min || n > bounds.max) {
    throw new ValidationError(
      `--${name} is '${raw}': expected a whole number from ${bounds.min} to ${bounds.max}`,
      { param: name },
    );
  }
  return n;
}

/**
 * Reads a number option within bounds written as a plain decimal (`0.7`, `2`, `-1.5`; no hex,
 * exponent or empty value), or undefined when absent.
 */
export function floatOption(
  values: ParsedArgs["values"],
  name: string,
  bounds: { min: number; max: number },
): number | undefined {
  const raw = values[name];
  if (raw === undefined) return undefined;
  const n = typeof raw === "string" && /^-?([0-9]+(\.[0-9]*)?|\.[0-9]+)$/.test(raw)
    ? Number(raw)
    : NaN;
  if (!Number.isFinite(n) || n < bounds.min || n > bounds.max) {
    throw new ValidationError(
      `--${name} is '${raw}': expected a decimal number from ${bounds.min} to ${bounds.max}`,
      { param: name },
    );
  }
  return n;
}

/** Reads an option that must be one of `choices`, or undefined when absent. */
export function choiceOption<T extends string>(
  values: ParsedArgs["values"],
  name: string,
  choices: readonly T[],
): T | undefined {
  const raw = values[name];
  if (raw === undefined) return undefined;
  if (!choices.includes(raw as T)) {
    throw new ValidationError(`--${name} is '${raw}': expected one of ${choices.join(", ")}`, {
      param: name,
    });
  }
  return raw as T;
}

/**
 * A ValidationError naming `--name` unless `url` is an http(s) URL; `expected` says what was
 * wanted ("an http(s) URL, e.g. …").
 */
export function checkHttpUrlOption(name: string, url: string, expected: string): void {
  let protocol: string | undefined;
  try {
    protocol = new URL(url.trim()).protocol;
  } catch {
    // reported below
  }
  if (protocol !== "http:" && protocol !== "https:") {
    throw new ValidationError(`--${name} is '${url}': expected ${expected}`, { param: name });
  }
}

const LIMIT_HELP: Readonly<Record<keyof AdmissionLimits, string>> = {
  maxPrompts: "most prompts in one /v1/completions request",
  maxN: "most choices per prompt (n)",
  maxMessages: "most messages in one chat, /tokenize or /v1/responses request",
  maxSequences: "most sequences one request starts (prompts × n)",
  maxPromptTokens: "most prompt tokens per request (every prompt × n)",
  maxGeneratedTokens: "most tokens one request may generate (max_tokens × n × prompts)",
  maxTopLogprobs: "most alternatives per token (top_logprobs, logprobs)",
  maxEmbeddingInputs: "most inputs in one /v1/embeddings request",
  maxEmbeddingTokens: "most tokens in one /v1/embeddings request",
  maxRerankDocuments: "most documents in one /v1/rerank request",
  maxRerankTokens: "most tokens in one /v1/rerank request (all pairs)",
};
const LIMIT_KEYS = Object.keys(ADMISSION_LIMIT_FLAGS) as (keyof AdmissionLimits)[];

/** The per-request limit options (`--max-prompts <n>` …) of `llm run` and `llm serve`. */
export const ADMISSION_LIMIT_OPTIONS: OptionSpec = Object.fromEntries(
  LIMIT_KEYS.map((key) => [ADMISSION_LIMIT_FLAGS[key], { type: "string" }]),
);

/** Help lines of {@link ADMISSION_LIMIT_OPTIONS} with their defaults, texts from column `column`. */
export function admissionLimitsHelp(column: number): string {
  return LIMIT_KEYS.map((key) => {
    const flag = `  --${ADMISSION_LIMIT_FLAGS[key]} <n>`;
    const text = `${LIMIT_HELP[key]} (default ${DEFAULT_ADMISSION_LIMITS[key]})`;
    return flag.length < column
      ? flag.padEnd(column) + text
      : `${flag}\n${" ".repeat(column)}${text}`;
  }).join("\n");
}

/** The per-request limits given on the command line (absent ones are left out). */
export function admissionLimitsOf(values: ParsedArgs["values"]): Partial<AdmissionLimits> {
  const limits: Partial<AdmissionLimits> = {};
  for (const key of LIMIT_KEYS) {
    // 0 would refuse every request; only "no alternatives per token" makes sense as 0.
    const min = key === "maxTopLogprobs" ? 0 : 1;
    const n = intOption(values, ADMISSION_LIMIT_FLAGS[key], { min, max: 1_000_000_000 });
    if (n !== undefined) limits[key] = n;
  }
  return limits;
}

/**
 * Reads a CORS allow-list option: `*` (any origin), `none`, or comma-separated origins such as
 * `http://localhost:3000`; undefined when absent.
 */
export function corsOriginsOption(
  values: ParsedArgs["values"],
  name: string,
): "*" | string[] | undefined {
  const raw = values[name];
  if (raw === undefined) return undefined;
  const text = String(raw).trim();
  if (text === "*") return "*";
  if (text === "none") return [];
  return text.split(",").map((part) => {
    const origin = part.trim();
    let parsed: string | undefined;
    try {
      parsed = new URL(origin).origin;
    } catch {
      // reported below
    }
    if (parsed !== origin) {
      throw new ValidationError(
        `--${name} has '${origin}': expected '*', 'none' or origins like http://localhost:3000 ` +
          "(scheme, host and port only), separated by commas",
        { param: name },
      );
    }
    return origin;
  });
}
