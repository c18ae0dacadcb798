/**
 * Turns zod validation failures into {@link ValidationError}s whose `param` names the offending
 * field path (`messages.0.role`), the way OpenAI reports a bad request.
 *
 * @module
 */
import type { z } from "zod";
import { ValidationError } from "../core/errors.ts";

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
  throw issueToError(result.error.issues[0] as unknown as Issue);
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
): ValidationError {
  const deepest = deepestIssue(issue as Issue, []);
  if (deepest.code === "unrecognized_keys" && deepest.keys?.length) {
    // Name the field itself, so a client sees which of its fields this server does not take.
    const param = [...deepest.path.map(String), deepest.keys[0]].join(".");
    return new ValidationError(
      `Unsupported parameter: '${param}' is not supported by this endpoint; leave it out.`,
      { param, code: "unsupported_parameter" },
    );
  }
  const path = deepest.path.map(String);
  const param = path.length > 0 ? path.join(".") : undefined;
  const where = param === undefined ? "the request body" : `'${param}'`;
  const detail = cleanMessage(deepest.message);
  if (deepest.code === "unrecognized_keys" && deepest.keys?.length) {
    const field = [...path, deepest.keys[0]].join(".");
    return new ValidationError(
      `Unsupported parameter: '${field}' is not supported by this server (see the README's ` +
        "HTTP API section for the fields it takes).",
      { param: field, code: "unsupported_parameter" },
    );
  }
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
