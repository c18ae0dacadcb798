/**
 * Turns zod validation failures into {@link ValidationError}s whose `param` names the offending
 * field path (`messages.0.role`), the way OpenAI reports a bad request.
 *
 * @module
 */
import type { z } from "zod";
import { ValidationError } from "../core/errors.ts";
import { closestMatch } from "../core/suggest.ts";

/** One zod issue, as much of it as we read (zod 4's `$ZodIssue`). */
interface Issue {
  code: string;
  path: PropertyKey[];
  message: string;
  expected?: string;
  errors?: Issue[][];
  input?: unknown;
  /** Of `unrecognized_keys`: the fields the schema does not know. */
  keys?: string[];
}

/**
 * Parses `body` with `schema`; on failure throws a {@link ValidationError} about the first issue,
 * with `param` set to its dotted field path and `code` one of `missing_required_parameter`,
 * `invalid_type`, `invalid_value` or `unsupported_parameter` (a field a strict schema does not
 * know).
 *
 * @example
 * ```ts
 * import { z } from "zod";
 * import { parseRequest } from "./validate.ts";
 * const n = parseRequest(z.object({ n: z.int() }), { n: 2 }).n; // 2
 * ```
 */
export function parseRequest<T>(schema: z.ZodType<T>, body: unknown): T {
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  throw issueToError(result.error.issues[0] as unknown as Issue, schema);
}

/**
 * Converts one zod issue to a {@link ValidationError}. For a union (`content` string or array) it
 * reports the branch that got furthest, so `messages.0.content.1.type` is named rather than
 * `messages.0.content`.
 *
 * @example
 * ```ts
 * import { issueToError } from "./validate.ts";
 * const err = issueToError({ code: "custom", path: ["n"], message: "n must be 1" });
 * console.log(err.param); // "n"
 * ```
 */
export function issueToError(
  issue: { code: string; path: PropertyKey[]; message: string },
  schema?: z.ZodType,
): ValidationError {
  const deepest = deepestIssue(issue as Issue, []);
  if (deepest.code === "unrecognized_keys" && deepest.keys?.length) {
    // Name the field itself, so a client sees which of its fields this server does not take,
    // and the known field it most likely meant (`max_token` → `max_tokens`).
    const key = deepest.keys[0];
    const param = [...deepest.path.map(String), key].join(".");
    const known = schema === undefined ? [] : knownFieldsAt(schema, deepest.path);
    const meant = closestMatch(key, known);
    return new ValidationError(
      `Unknown parameter: '${param}' is not supported by this endpoint; ` +
        (meant !== undefined ? `did you mean '${meant}'?` : "leave it out."),
      { param, code: "unknown_parameter" },
    );
  }
  const path = deepest.path.map(String);
  const param = path.length > 0 ? path.join(".") : undefined;
  const where = param === undefined ? "the request body" : `'${param}'`;
  const detail = cleanMessage(deepest.message);
  if (deepest.code === "invalid_type" && /received undefined$/.test(deepest.message)) {
    return new ValidationError(`Missing required parameter: ${where}.`, {
      param,
      code: "missing_required_parameter",
    });
  }
  if (param === undefined && deepest.code === "invalid_type") {
    return new ValidationError(`The request body must be a JSON object (${detail}).`, {
      code: "invalid_type",
    });
  }
  return new ValidationError(`Invalid value for ${where}: ${detail}.`, {
    param,
    code: deepest.code === "invalid_type" ? "invalid_type" : "invalid_value",
  });
}

/**
 * Follows union branches to the issue of the branch the input most likely meant: a branch whose
 * first issue is not a plain type mismatch (the shape matched, a value did not), else the branch
 * that got deepest; ties go to the earlier branch.
 */
function deepestIssue(issue: Issue, prefix: PropertyKey[]): Issue {
  const here: Issue = { ...issue, path: [...prefix, ...issue.path] };
  if (issue.code !== "invalid_union" || !issue.errors || issue.errors.length === 0) return here;
  const rank = (i: Issue) => (i.code === "invalid_type" ? 0 : 1_000_000) + i.path.length;
  let best: Issue | undefined;
  for (const branch of issue.errors) {
    const first = branch[0];
    if (first === undefined) continue;
    const candidate = deepestIssue(first, here.path);
    if (best === undefined || rank(candidate) > rank(best)) best = candidate;
  }
  // Every branch failed on the type of the value itself: the union's own message is best.
  // (When the value is missing altogether, say so: the branch's "received undefined" does.)
  if (best === undefined) return here;
  const atUnion = best.code === "invalid_type" && best.path.length === here.path.length;
  return atUnion && !/received undefined$/.test(best.message) ? here : best;
}

function cleanMessage(message: string): string {
  return message.replace(/^Invalid (input|option): /, "").replace(/\.$/, "");
}

/** A zod 4 schema's definition, as much of it as {@link knownFieldsAt} walks. */
interface SchemaDef {
  type?: string;
  shape?: Record<string, unknown>;
  innerType?: unknown;
  in?: unknown;
  element?: unknown;
  options?: unknown[];
  getter?: () => unknown;
}

/**
 * The field names the object schema(s) at `path` in `schema` know (through optional, nullable,
 * default, pipe, lazy, array and union wrappers); empty when none is found.
 */
function knownFieldsAt(schema: unknown, path: readonly PropertyKey[], depth = 0): string[] {
  const def = (schema as { _zod?: { def?: SchemaDef } } | null)?._zod?.def;
  if (def === undefined || depth > 64) return [];
  switch (def.type) {
    case "optional":
    case "nullable":
    case "default":
    case "prefault":
    case "readonly":
    case "nonoptional":
    case "catch":
      return knownFieldsAt(def.innerType, path, depth + 1);
    case "pipe":
      return knownFieldsAt(def.in, path, depth + 1);
    case "lazy":
      return def.getter ? knownFieldsAt(def.getter(), path, depth + 1) : [];
    case "union":
      return (def.options ?? []).flatMap((o) => knownFieldsAt(o, path, depth + 1));
    case "array":
      return typeof path[0] === "number"
        ? knownFieldsAt(def.element, path.slice(1), depth + 1)
        : [];
    case "object": {
      const shape = def.shape ?? {};
      if (path.length === 0) return Object.keys(shape);
      const next = shape[String(path[0])];
      return next === undefined ? [] : knownFieldsAt(next, path.slice(1), depth + 1);
    }
    default:
      return [];
  }
}
