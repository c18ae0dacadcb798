/**
 * zod schemas for the long lists a request may hold (prompts of token ids, texts, `/detokenize`
 * ids), checked in one loop each. zod checks every item on its own, and in a union tries each
 * branch on every item: a body of 3 million ids kept the engine's thread for 4-7 s.
 *
 * Issues come as zod's would: a value of another type is `invalid_type` (so a union names the
 * branch the input meant, see validate.ts), a value of the right type out of range is `custom`.
 *
 * @module
 */
import { z } from "zod";

/** What is wrong with an item: null when nothing, else its issue. */
type Check = (item: unknown) => { type: string } | { message: string } | null;

const tokenId: Check = (v) =>
  typeof v !== "number"
    ? { type: "number" }
    : Number.isInteger(v) && v >= 0
    ? null
    : { message: "expected a token id (a whole number >= 0)" };
const integer: Check = (v) =>
  typeof v !== "number" ? { type: "number" } : Number.isInteger(v) ? null : {
    message: "expected a whole number",
  };
const string: Check = (v) => typeof v === "string" ? null : { type: "string" };

type Ctx = z.core.$RefinementCtx;

// True when `value` passes `check`; else adds its issue at `path`.
function passes(ctx: Ctx, check: Check, value: unknown, path: number[]): boolean {
  const problem = check(value);
  if (problem === null) return true;
  if ("type" in problem) {
    const received = value === null ? "null" : Array.isArray(value) ? "array" : typeof value;
    ctx.addIssue({
      code: "invalid_type",
      expected: problem.type as "number",
      path,
      message: `Invalid input: expected ${problem.type}, received ${received}`,
    });
  } else ctx.addIssue({ code: "custom", path, message: problem.message });
  return false;
}

const list: Check = (v) => Array.isArray(v) ? null : { type: "array" };

// A list whose items pass `item` (at least one when `nonEmpty`).
function listOf<T>(item: Check, nonEmpty: boolean): z.ZodType<T[]> {
  return z.any().superRefine((value, ctx) => {
    if (!passes(ctx, list, value, [])) return;
    if (nonEmpty && value.length === 0) {
      ctx.addIssue({ code: "custom", path: [], message: "expected at least one item" });
      return;
    }
    for (let i = 0; i < value.length; i++) if (!passes(ctx, item, value[i], [i])) return;
  }) as unknown as z.ZodType<T[]>;
}

/** A non-empty list of strings. */
export const STRINGS: z.ZodType<string[]> = listOf(string, true);

/** A non-empty list of token ids (whole numbers >= 0). */
export const TOKEN_IDS: z.ZodType<number[]> = listOf(tokenId, true);

/** A list of whole numbers, empty allowed (`/detokenize`). */
export const INTEGERS: z.ZodType<number[]> = listOf(integer, false);

/** A non-empty list of non-empty token-id lists. */
export const TOKEN_ID_LISTS: z.ZodType<number[][]> = z.any().superRefine((value, ctx) => {
  if (!passes(ctx, list, value, [])) return;
  if (value.length === 0) {
    ctx.addIssue({ code: "custom", path: [], message: "expected at least one list" });
    return;
  }
  for (let i = 0; i < value.length; i++) {
    const ids = value[i];
    if (!passes(ctx, list, ids, [i])) return;
    if (ids.length === 0) {
      ctx.addIssue({ code: "custom", path: [i], message: "expected at least one token id" });
      return;
    }
    for (let j = 0; j < ids.length; j++) if (!passes(ctx, tokenId, ids[j], [i, j])) return;
  }
}) as unknown as z.ZodType<number[][]>;
