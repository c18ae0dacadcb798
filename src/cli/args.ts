/**
 * Argument parsing for the CLI commands: `node:util` parseArgs (JSR's @std/cli is unreachable
 * here) with errors turned into one clear line.
 *
 * @module
 */

import { parseArgs } from "node:util";
import { ValidationError } from "../core/errors.ts";
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
  try {
    const { values, positionals } = parseArgs({
      args,
      options: { ...options, help: { type: "boolean", short: "h" } },
      allowPositionals,
      strict: true,
    });
    return { values: values as ParsedArgs["values"], positionals };
  } catch (err) {
    const reason = err instanceof Error ? err.message.replace(/\.?\s*To specify.*$/s, "") : err;
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
  const n = Number(raw);
  if (!Number.isInteger(n) || n < bounds.min || n > bounds.max) {
    throw new ValidationError(
      `--${name} is '${raw}': expected a whole number from ${bounds.min} to ${bounds.max}`,
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

const LIMIT_HELP: Readonly<Record<keyof AdmissionLimits, string>> = {
  maxPrompts: "most prompts in one /v1/completions request",
  maxN: "most choices per prompt (n)",
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
    const n = intOption(values, ADMISSION_LIMIT_FLAGS[key], { min: 0, max: 1_000_000_000 });
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
