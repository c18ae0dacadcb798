/**
 * JSON text written a slice at a time. `JSON.stringify` of a big answer (a prompt's
 * log-probabilities with 20 alternatives per token: tens of MB) holds the server's thread for
 * seconds, and every other request waits. {@link JsonTextWriter} writes the same text as
 * `JSON.stringify(value)`, as many characters as asked per call, so the caller can let others run
 * between slices; {@link LazyJsonArray} holds an array whose items are made only when written.
 *
 * @module
 */

/**
 * An array whose items are made when they are written, one at a time: the wire form of a long
 * list need not exist all at once. `JSON.stringify` writes it as the whole array (`toJSON`).
 *
 * @example
 * ```ts
 * import { LazyJsonArray } from "./json_text.ts";
 * JSON.stringify({ squares: new LazyJsonArray(3, (i) => i * i) }); // '{"squares":[0,1,4]}'
 * ```
 */
export class LazyJsonArray<T> {
  /** How many items there are. */
  readonly length: number;
  /** Makes item `index`. */
  readonly at: (index: number) => T;

  /** `length` items; item `i` is `at(i)`. */
  constructor(length: number, at: (index: number) => T) {
    this.length = length;
    this.at = at;
  }

  /** Every item, made now. */
  toJSON(): T[] {
    return Array.from({ length: this.length }, (_, i) => this.at(i));
  }
}

/** A list in a wire object: an array, or one whose items are made as they are written. */
export type JsonList<T> = T[] | LazyJsonArray<T>;

/**
 * `a` then `b`, items made as they are written.
 *
 * @example
 * ```ts
 * import { joinLists, LazyJsonArray } from "./json_text.ts";
 * JSON.stringify(joinLists([1], new LazyJsonArray(2, (i) => i + 2))); // "[1,2,3]"
 * ```
 */
export function joinLists<T>(a: JsonList<T>, b: JsonList<T>): LazyJsonArray<T> {
  return new LazyJsonArray(
    a.length + b.length,
    (i) => i < a.length ? itemOf(a, i) : itemOf(b, i - a.length),
  );
}

function itemOf<T>(list: JsonList<T>, index: number): T {
  return list instanceof LazyJsonArray ? list.at(index) : list[index];
}

type Frame =
  | { list: JsonList<unknown>; index: number }
  | { object: Record<string, unknown>; keys: string[]; index: number; wrote: boolean };

/**
 * Writes `JSON.stringify(value)` (no replacer, no indent) in slices: {@link next} returns the next
 * slice of at least the asked length (an item's text is not cut), and null once all is written.
 *
 * @example
 * ```ts
 * import { JsonTextWriter } from "./json_text.ts";
 * const writer = new JsonTextWriter({ a: [1, 2, 3] });
 * writer.next(4); // '{"a":[1'
 * writer.next(1000); // ',2,3]}'
 * writer.next(1000); // null
 * ```
 */
export class JsonTextWriter {
  #root: { value: unknown } | null;
  #stack: Frame[] = [];
  /** Objects and lists being written: met again inside themselves, they are a cycle. */
  #open = new Set<unknown>();
  #parts: string[] = [];
  #size = 0;

  /** Writes `value` (nothing is read of it until the first {@link next}). */
  constructor(value: unknown) {
    this.#root = { value };
  }

  /** Whether everything is written. */
  get done(): boolean {
    return this.#root === null && this.#stack.length === 0;
  }

  /** The next slice, `chars` long or somewhat more; null when nothing is left. */
  next(chars: number): string | null {
    if (this.done) return null;
    this.#parts = [];
    this.#size = 0;
    if (this.#root !== null) {
      const { value } = this.#root;
      this.#root = null;
      if (!this.#value(resolve(value, ""))) throw new TypeError("nothing to write as JSON");
    }
    while (this.#stack.length > 0 && this.#size < chars) this.#step(this.#stack.at(-1)!);
    return this.#parts.join("");
  }

  #emit(text: string): void {
    this.#parts.push(text);
    this.#size += text.length;
  }

  // Writes the next item of the innermost open list or object, or closes it.
  #step(frame: Frame): void {
    if ("list" in frame) {
      const { list } = frame;
      if (frame.index < list.length) {
        if (Array.isArray(list) && this.#primitiveRun(frame, list)) return;
        const index = frame.index++;
        if (index > 0) this.#emit(",");
        const item = itemOf(list, index);
        if (!this.#value(resolve(item, String(index)))) this.#emit("null");
        return;
      }
      this.#close(list, "]");
      return;
    }
    const { object, keys } = frame;
    while (frame.index < keys.length) {
      const key = keys[frame.index++];
      const item = resolve(object[key], key);
      if (skipped(item)) continue;
      this.#emit((frame.wrote ? "," : "") + JSON.stringify(key) + ":");
      frame.wrote = true;
      this.#value(item);
      return;
    }
    this.#close(object, "}");
  }

  // Writes the run of numbers, strings, booleans and nulls next in `list` with one
  // JSON.stringify (a vector of floats is one call, not one per number). False when there is none.
  #primitiveRun(frame: { index: number }, list: readonly unknown[]): boolean {
    const from = frame.index;
    let to = from;
    for (let weight = 0; to < list.length && weight < RUN_CHARS && isPrimitive(list[to]); to++) {
      const item = list[to];
      weight += typeof item === "string" ? item.length : 8;
    }
    if (to === from) return false;
    frame.index = to;
    const text = JSON.stringify(list.slice(from, to));
    this.#emit((from > 0 ? "," : "") + text.slice(1, -1));
    return true;
  }

  #close(of: unknown, bracket: string): void {
    this.#stack.pop();
    this.#open.delete(of);
    this.#emit(bracket);
  }

  // Writes a value whose toJSON was applied: a leaf at once, a list or object opened. False when
  // it has no JSON text (undefined, a function, a symbol).
  #value(value: unknown): boolean {
    if (skipped(value)) return false;
    if (!isContainer(value)) {
      this.#emit(JSON.stringify(value));
      return true;
    }
    if (this.#open.has(value)) throw new TypeError("Converting circular structure to JSON");
    this.#open.add(value);
    if (Array.isArray(value) || value instanceof LazyJsonArray) {
      this.#emit("[");
      this.#stack.push({ list: value, index: 0 });
    } else {
      const object = value as Record<string, unknown>;
      this.#emit("{");
      this.#stack.push({ object, keys: Object.keys(object), index: 0, wrote: false });
    }
    return true;
  }
}

// What JSON.stringify writes in place of `value` (its toJSON's answer, if it has one); a lazy
// array stays itself, to be written item by item.
function resolve(value: unknown, key: string): unknown {
  if (
    typeof value === "object" && value !== null && !(value instanceof LazyJsonArray) &&
    typeof (value as { toJSON?: unknown }).toJSON === "function"
  ) {
    return (value as { toJSON(key: string): unknown }).toJSON(key);
  }
  return value;
}

// About how many characters one JSON.stringify call of a run writes (a slice stays a few ms of
// work, whether the run is of numbers or of long strings).
const RUN_CHARS = 64 * 1024;

function isPrimitive(value: unknown): boolean {
  const type = typeof value;
  return type === "number" || type === "string" || type === "boolean" || value === null;
}

function skipped(value: unknown): boolean {
  return value === undefined || typeof value === "function" || typeof value === "symbol";
}

// JSON.isRawJSON (ES2025; not in TypeScript's lib yet).
const isRawJson = (JSON as { isRawJSON?: (value: unknown) => boolean }).isRawJSON ?? (() => false);

// Objects written member by member; boxed primitives and raw JSON are leaves, as JSON.stringify
// writes them.
function isContainer(value: unknown): value is object {
  return typeof value === "object" && value !== null && !isRawJson(value) &&
    !(value instanceof Number || value instanceof String || value instanceof Boolean ||
      value instanceof BigInt);
}
