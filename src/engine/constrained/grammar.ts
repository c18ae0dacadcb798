/**
 * The grammar constrained decoding enforces: a graph of nodes over bytes, built from a JSON Schema
 * (schema_compiler.ts) or by the tool-call formats (chat/tool_format.ts), and run by matcher.ts.
 *
 * Terminals (`lit`, `string`, `number`, `regex`, `text`) consume bytes; the others (`seq`, `alt`,
 * `repeat`, `object`, `ref`) arrange them. JSON comes out compact, with at most one space after `:` and `,`
 * (the way models trained on `json.dumps` write it), so a model cannot pad forever; or with no
 * whitespace at all ({@link COMPACT}, vLLM's `disable_any_whitespace`).
 *
 * @module
 */

import type { CharMatcher } from "./regex.ts";
import { type NumberStep, numberStep } from "./_terminals.ts";

let nextId = 0;

/** One of several byte strings (`""` makes it optional); `tags[i]` tells its parent which one. */
export interface LitNode {
  readonly kind: "lit";
  readonly id: number;
  readonly options: readonly Uint8Array[];
  readonly tags: readonly number[];
}

/** A JSON string, quotes included, with a length in characters and an optional pattern. */
export interface StringNode {
  readonly kind: "string";
  readonly id: number;
  readonly minLength: number;
  readonly maxLength: number;
  readonly pattern: CharMatcher | null;
}

/** A JSON number (or integer) within bounds, optionally a multiple of a step (`multipleOf`). */
export interface NumberNode {
  readonly kind: "number";
  readonly id: number;
  readonly integer: boolean;
  readonly minimum: number;
  readonly maximum: number;
  readonly exclusiveMinimum: boolean;
  readonly exclusiveMaximum: boolean;
  readonly step: NumberStep | null;
}

/**
 * Plain text (UTF-8, no quotes, no escapes) that `pattern` matches whole: vLLM's `guided_regex`.
 * It may end wherever the pattern accepts, and must once the pattern can take nothing more.
 */
export interface RegexNode {
  readonly kind: "regex";
  readonly id: number;
  readonly pattern: CharMatcher;
}

/**
 * Free text (any bytes) that may not contain `trigger`; with `untilTrigger` it ends right after
 * the trigger, otherwise it ends the output (a trigger kills it). It never contains any of
 * `forbidden`, and its first byte may not be one of `notFirst`.
 */
export interface TextNode {
  readonly kind: "text";
  readonly id: number;
  readonly untilTrigger: boolean;
  readonly notFirst: Uint8Array;
  /** The strings watched for: `trigger` first (when it has one), then the forbidden ones. */
  readonly watched: readonly Uint8Array[];
  /** Whether `watched` starts with a trigger (bare calls have none). */
  readonly hasTrigger: boolean;
  /** 1 for each byte a watched string starts with. */
  readonly starts: Uint8Array;
}

/** Its items one after the other. */
export interface SeqNode {
  readonly kind: "seq";
  readonly id: number;
  readonly items: readonly GrammarNode[];
}

/** Any one of its options. */
export interface AltNode {
  readonly kind: "alt";
  readonly id: number;
  readonly options: readonly GrammarNode[];
}

/** `min` to `max` items with a separator between them. */
export interface RepeatNode {
  readonly kind: "repeat";
  readonly id: number;
  readonly item: GrammarNode;
  readonly separator: GrammarNode;
  readonly min: number;
  readonly max: number;
}

/** One property of an {@link ObjectNode}. */
export interface PropertyRule {
  readonly key: string;
  readonly value: GrammarNode;
  readonly required: boolean;
}

/**
 * A JSON object whose properties come in the declared order (optional ones may be left out), or,
 * with no declared properties, keys matching `names` whose values match `additional`.
 */
export interface ObjectNode {
  readonly kind: "object";
  readonly id: number;
  readonly properties: readonly PropertyRule[];
  readonly additional: GrammarNode | null;
  /** The keys of `additional` members: a grammar of JSON strings, quotes included. */
  readonly names: GrammarNode;
  /** `firstRequired[i]`: index of the first required property at or after i, or -1. */
  readonly firstRequired: readonly number[];
  /** `keys[i]`: the quoted keys that may come next when property i is the first candidate. */
  readonly keys: readonly LitNode[];
  /** Its `,` and `:`. */
  readonly spacing: JsonSpacing;
}

/** A named node defined later (`$ref`), so schemas can be recursive. */
export interface RefNode {
  readonly kind: "ref";
  readonly id: number;
  readonly name: string;
  target: GrammarNode | null;
}

/** Any grammar node. */
export type GrammarNode =
  | LitNode
  | StringNode
  | NumberNode
  | RegexNode
  | TextNode
  | SeqNode
  | AltNode
  | RepeatNode
  | ObjectNode
  | RefNode;

const utf8 = new TextEncoder();

/** One of `options` (UTF-8); the parent learns the index of the one that matched. */
export function lit(...options: string[]): LitNode {
  return { kind: "lit", id: nextId++, options: options.map((o) => utf8.encode(o)), tags: [] };
}

/** Like {@link lit}, with the tag each option reports. */
export function taggedLit(options: readonly string[], tags: readonly number[]): LitNode {
  return { kind: "lit", id: nextId++, options: options.map((o) => utf8.encode(o)), tags };
}

/** A JSON string. */
export function stringNode(
  options: { minLength?: number; maxLength?: number; pattern?: CharMatcher | null } = {},
): StringNode {
  return {
    kind: "string",
    id: nextId++,
    minLength: options.minLength ?? 0,
    maxLength: options.maxLength ?? Infinity,
    pattern: options.pattern ?? null,
  };
}

/** A JSON number, or an integer. */
export function numberNode(
  options: {
    integer?: boolean;
    minimum?: number;
    maximum?: number;
    exclusiveMinimum?: boolean;
    exclusiveMaximum?: boolean;
    /** Every value is a whole multiple of this (> 0). */
    multipleOf?: number;
  } = {},
): NumberNode {
  const bounds = {
    integer: options.integer ?? false,
    minimum: options.minimum ?? -Infinity,
    maximum: options.maximum ?? Infinity,
    exclusiveMinimum: options.exclusiveMinimum ?? false,
    exclusiveMaximum: options.exclusiveMaximum ?? false,
  };
  const step = options.multipleOf === undefined ? null : numberStep(options.multipleOf, bounds);
  return { kind: "number", id: nextId++, ...bounds, step };
}

/** Text the pattern matches whole; see {@link RegexNode}. */
export function regexNode(pattern: CharMatcher): RegexNode {
  return { kind: "regex", id: nextId++, pattern };
}

/** Free text; see {@link TextNode}. */
export function textNode(
  trigger: string,
  options: { untilTrigger: boolean; notFirst?: string; forbidden?: readonly string[] },
): TextNode {
  const forbidden = (options.forbidden ?? []).filter((f) => f !== "" && f !== trigger);
  const watched = [...(trigger === "" ? [] : [trigger]), ...forbidden].map((w) => utf8.encode(w));
  const starts = new Uint8Array(256);
  for (const w of watched) starts[w[0]] = 1;
  return {
    kind: "text",
    id: nextId++,
    untilTrigger: options.untilTrigger,
    notFirst: utf8.encode(options.notFirst ?? ""),
    watched,
    hasTrigger: trigger !== "",
    starts,
  };
}

/** A sequence. */
export function seq(...items: GrammarNode[]): SeqNode {
  return { kind: "seq", id: nextId++, items };
}

/** A choice (a single option is returned as it is). */
export function alt(...options: GrammarNode[]): GrammarNode {
  return options.length === 1 ? options[0] : { kind: "alt", id: nextId++, options };
}

/** A repetition. */
export function repeat(
  item: GrammarNode,
  separator: GrammarNode,
  bounds: { min: number; max: number },
): RepeatNode {
  return { kind: "repeat", id: nextId++, item, separator, ...bounds };
}

/** A placeholder whose `target` is set once the named definition is built. */
export function ref(name: string): RefNode {
  return { kind: "ref", id: nextId++, name, target: null };
}

/** The punctuation between JSON members and items, with the whitespace it may carry. */
export interface JsonSpacing {
  /** `,` between items and members. */
  readonly comma: LitNode;
  /** `:` after a key. */
  readonly colon: LitNode;
}
/** `,` and `:` each optionally followed by one space (the default). */
export const SPACED: JsonSpacing = { comma: lit(",", ", "), colon: lit(":", ": ") };
/** `,` and `:` alone: JSON with no whitespace outside its strings. */
export const COMPACT: JsonSpacing = { comma: lit(","), colon: lit(":") };
/** `{` */
export const OPEN_BRACE: LitNode = lit("{");
/** `}` */
export const CLOSE_BRACE: LitNode = lit("}");

/** How many items an array has, and how they are separated (default {@link SPACED}). */
export interface ArrayShape {
  min: number;
  max: number;
  spacing?: JsonSpacing;
}

/** A JSON array. */
export function arrayNode(item: GrammarNode, shape: ArrayShape): SeqNode {
  const { comma } = shape.spacing ?? SPACED;
  return seq(lit("["), repeat(item, comma, { min: shape.min, max: shape.max }), lit("]"));
}

/**
 * A JSON array whose first items each have their own grammar (`prefix`, a tuple), followed by
 * items of `rest` (null: none), `min` to `max` items in all. Each optional position nests one
 * level deeper (what follows the first i items: the end, or a comma and item i).
 */
export function tupleNode(
  prefix: readonly GrammarNode[],
  rest: GrammarNode | null,
  bounds: ArrayShape,
): SeqNode {
  const comma = (bounds.spacing ?? SPACED).comma;
  const after = (i: number): GrammarNode => {
    const options: GrammarNode[] = i >= bounds.min ? [lit("")] : [];
    if (i < bounds.max && i < prefix.length) {
      options.push(seq(...(i === 0 ? [] : [comma]), prefix[i], after(i + 1)));
    } else if (i < bounds.max && rest !== null) {
      const items = repeat(rest, comma, { min: Math.max(1, bounds.min - i), max: bounds.max - i });
      options.push(i === 0 ? items : seq(comma, items));
    }
    return alt(...options);
  };
  return seq(lit("["), after(0), lit("]"));
}

/** Any object key. */
const ANY_KEY: StringNode = stringNode();

/** A JSON object; see {@link ObjectNode}. Its keys are any strings unless `names` says. */
export function objectNode(
  properties: readonly PropertyRule[],
  additional: GrammarNode | null,
  options: { names?: GrammarNode; spacing?: JsonSpacing } = {},
): ObjectNode {
  const n = properties.length;
  const firstRequired: number[] = new Array(n + 1).fill(-1);
  for (let i = n - 1; i >= 0; i--) {
    firstRequired[i] = properties[i].required ? i : firstRequired[i + 1];
  }
  const keys: LitNode[] = [];
  for (let i = 0; i < n; i++) {
    const last = firstRequired[i] === -1 ? n - 1 : firstRequired[i];
    const candidates = properties.slice(i, last + 1).map((p) => JSON.stringify(p.key));
    keys.push(taggedLit(candidates, candidates.map((_, k) => i + k)));
  }
  return {
    kind: "object",
    id: nextId++,
    properties,
    additional: n === 0 ? additional : null,
    names: options.names ?? ANY_KEY,
    firstRequired,
    keys,
    spacing: options.spacing ?? SPACED,
  };
}

/** Any JSON value (objects and arrays of any values, any string, number, boolean or null). */
export function anyJsonValue(spacing: JsonSpacing = SPACED): GrammarNode {
  const value = ref("any JSON value");
  value.target = alt(
    objectNode([], value, { spacing }),
    arrayNode(value, { min: 0, max: Infinity, spacing }),
    stringNode(),
    numberNode(),
    lit("true", "false", "null"),
  );
  return value;
}
