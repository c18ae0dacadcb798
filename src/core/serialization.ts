/**
 * Serialization: `serialize`/`deserialize` round-trip values JSON cannot hold (Date, Map, Set, typed
 * arrays, ArrayBuffer, bigint, undefined, NaN/±Infinity/-0, RegExp) through a tagged JSON encoding;
 * `toJson`/`fromJson` are plain JSON with clear errors.
 *
 * Tagged form: a special value becomes `{"$svc": "<Tag>", "v": <payload>}`. A user object that has
 * its own `$svc` key is wrapped as `{"$svc": "Object", "v": {...}}`, so it can never be mistaken
 * for a tag. Binary payloads are base64 of the bytes in little-endian order (the byte order of
 * every platform Deno runs on).
 *
 * Public API only (`@svc/cli`'s `serialize`, `deserialize`, `toJson`, `fromJson`, the spec's
 * serialization helpers): no module of Svc itself uses it.
 *
 * @example
 * ```ts
 * import { deserialize, serialize } from "@svc/cli";
 * const text = serialize({ at: new Date(0), seen: new Set([1n, 2n]) });
 * const back = deserialize(text) as { at: Date; seen: Set<bigint> };
 * back.at.getTime(); // 0
 * ```
 *
 * @module
 */

import { ValidationError } from "./errors.ts";
import { findJsonErrorPosition } from "./_json_position.ts";

const TAG = "$svc";

// deno-lint-ignore no-explicit-any
type TypedArrayCtor = new (buffer: ArrayBuffer) => any;
const TYPED_ARRAYS: { [name: string]: TypedArrayCtor } = {
  Int8Array,
  Uint8Array,
  Uint8ClampedArray,
  Int16Array,
  Uint16Array,
  Int32Array,
  Uint32Array,
  Float32Array,
  Float64Array,
  BigInt64Array,
  BigUint64Array,
};
// Float16Array is recent; include it where the runtime has it.
const float16 = (globalThis as { Float16Array?: TypedArrayCtor }).Float16Array;
if (float16 !== undefined) TYPED_ARRAYS.Float16Array = float16;

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/**
 * Encodes `value` as JSON text that {@link deserialize} turns back into an equal value.
 * Functions, symbols and circular references raise `ValidationError` naming the path.
 * Class instances other than the supported built-ins are stored as plain objects.
 *
 * @example
 * ```ts
 * serialize(new Map([["a", 1n]])); // '{"$svc":"Map","v":[["a",{"$svc":"BigInt","v":"1"}]]}'
 * ```
 */
export function serialize(value: unknown): string {
  return JSON.stringify(encode(value, "$", new Set()));
}

/**
 * Decodes text written by {@link serialize}. Malformed text or a malformed tag raises
 * `ValidationError` naming the position or path.
 *
 * @example
 * ```ts
 * deserialize(serialize([undefined, NaN])); // [undefined, NaN]
 * ```
 */
export function deserialize(text: string): unknown {
  return decode(fromJson(text) as Json, "$");
}

function encode(value: unknown, path: string, stack: Set<object>): Json {
  switch (typeof value) {
    case "string":
    case "boolean":
      return value;
    case "number":
      if (Number.isNaN(value)) return tag("Number", "NaN");
      if (value === Infinity) return tag("Number", "Infinity");
      if (value === -Infinity) return tag("Number", "-Infinity");
      if (Object.is(value, -0)) return tag("Number", "-0");
      return value;
    case "bigint":
      return tag("BigInt", value.toString());
    case "undefined":
      return tag("undefined", null);
    case "function":
    case "symbol":
      throw new ValidationError(`cannot serialize a ${typeof value} at ${path}`, { param: path });
  }
  if (value === null) return null;
  const obj = value as object;
  if (stack.has(obj)) {
    throw new ValidationError(`cannot serialize a circular reference at ${path}`, { param: path });
  }
  stack.add(obj);
  try {
    return encodeObject(obj, path, stack);
  } finally {
    stack.delete(obj);
  }
}

function encodeObject(obj: object, path: string, stack: Set<object>): Json {
  if (Array.isArray(obj)) {
    // Array.from turns holes into undefined, which is then kept.
    return Array.from(obj, (item, i) => encode(item, `${path}[${i}]`, stack));
  }
  if (obj instanceof Date) {
    const time = obj.getTime();
    return tag("Date", Number.isNaN(time) ? null : time);
  }
  if (obj instanceof Map) {
    return tag(
      "Map",
      Array.from(
        obj,
        (
          [k, v],
          i,
        ) => [encode(k, `${path}.key(${i})`, stack), encode(v, `${path}.get(${i})`, stack)],
      ),
    );
  }
  if (obj instanceof Set) {
    return tag("Set", Array.from(obj, (item, i) => encode(item, `${path}.item(${i})`, stack)));
  }
  if (obj instanceof ArrayBuffer) return tag("ArrayBuffer", toBase64(new Uint8Array(obj)));
  if (obj instanceof DataView) {
    return tag("DataView", toBase64(new Uint8Array(obj.buffer, obj.byteOffset, obj.byteLength)));
  }
  if (ArrayBuffer.isView(obj)) {
    const name = obj.constructor.name;
    if (!(name in TYPED_ARRAYS)) {
      throw new ValidationError(`cannot serialize a ${name} at ${path}`, { param: path });
    }
    return tag(name, toBase64(new Uint8Array(obj.buffer, obj.byteOffset, obj.byteLength)));
  }
  if (obj instanceof RegExp) return tag("RegExp", { source: obj.source, flags: obj.flags });
  const withToJson = obj as { toJSON?: () => unknown };
  if (typeof withToJson.toJSON === "function") return encode(withToJson.toJSON(), path, stack);
  const out: { [key: string]: Json } = {};
  for (const [key, item] of Object.entries(obj)) {
    setOwn(out, key, encode(item, `${path}.${key}`, stack));
  }
  return Object.hasOwn(out, TAG) ? tag("Object", out) : out;
}

function tag(name: string, payload: Json): Json {
  return { [TAG]: name, v: payload };
}

function decode(node: Json, path: string): unknown {
  if (node === null || typeof node !== "object") return node;
  if (Array.isArray(node)) return node.map((item, i) => decode(item, `${path}[${i}]`));
  if (!Object.hasOwn(node, TAG)) return decodeEntries(node, path);
  const name = node[TAG];
  const payload = node.v;
  if (typeof name !== "string" || Object.keys(node).some((k) => k !== TAG && k !== "v")) {
    throw malformed(path, `a "${TAG}" tag object must be {"${TAG}": name, "v": payload}`);
  }
  switch (name) {
    case "undefined":
      return undefined;
    case "Object":
      if (!isPlainJsonObject(payload)) throw malformed(path, "Object payload must be an object");
      return decodeEntries(payload, path);
    case "Number": {
      const numbers: { [k: string]: number } = {
        "NaN": NaN,
        "Infinity": Infinity,
        "-Infinity": -Infinity,
        "-0": -0,
      };
      if (typeof payload !== "string" || !(payload in numbers)) {
        throw malformed(path, `Number payload must be NaN, Infinity, -Infinity or -0`);
      }
      return numbers[payload];
    }
    case "BigInt":
      if (typeof payload !== "string" || !/^-?\d+$/.test(payload)) {
        throw malformed(path, "BigInt payload must be a decimal integer string");
      }
      return BigInt(payload);
    case "Date":
      if (payload !== null && (typeof payload !== "number" || !Number.isFinite(payload))) {
        throw malformed(path, "Date payload must be a number of milliseconds or null");
      }
      return new Date(payload === null ? NaN : payload);
    case "Map":
      if (!Array.isArray(payload) || payload.some((e) => !Array.isArray(e) || e.length !== 2)) {
        throw malformed(path, "Map payload must be an array of [key, value] pairs");
      }
      return new Map(
        (payload as Json[][]).map((
          [k, v],
          i,
        ) => [decode(k, `${path}.key(${i})`), decode(v, `${path}.get(${i})`)]),
      );
    case "Set":
      if (!Array.isArray(payload)) throw malformed(path, "Set payload must be an array");
      return new Set(payload.map((item, i) => decode(item, `${path}.item(${i})`)));
    case "RegExp": {
      if (!isPlainJsonObject(payload) || typeof payload.source !== "string") {
        throw malformed(path, "RegExp payload must be {source, flags}");
      }
      try {
        return new RegExp(payload.source, String(payload.flags ?? ""));
      } catch (err) {
        throw malformed(path, `invalid RegExp: ${(err as Error).message}`);
      }
    }
    case "ArrayBuffer":
      return fromBase64(payload, path).buffer;
    case "DataView":
      return new DataView(fromBase64(payload, path).buffer);
  }
  const ctor = TYPED_ARRAYS[name];
  if (ctor === undefined) throw malformed(path, `unknown tag "${name}"`);
  const bytes = fromBase64(payload, path);
  const size = (ctor as unknown as { BYTES_PER_ELEMENT: number }).BYTES_PER_ELEMENT;
  if (bytes.byteLength % size !== 0) {
    throw malformed(
      path,
      `${name} payload has ${bytes.byteLength} bytes, not a multiple of ${size}`,
    );
  }
  return new ctor(bytes.buffer);
}

function decodeEntries(node: { [key: string]: Json }, path: string): { [key: string]: unknown } {
  const out: { [key: string]: unknown } = {};
  for (const [key, item] of Object.entries(node)) setOwn(out, key, decode(item, `${path}.${key}`));
  return out;
}

/** Sets an own property even for `__proto__`, which plain assignment would treat as the prototype. */
function setOwn(target: object, key: string, value: unknown): void {
  Object.defineProperty(target, key, {
    value,
    enumerable: true,
    writable: true,
    configurable: true,
  });
}

function isPlainJsonObject(node: Json | undefined): node is { [key: string]: Json } {
  return typeof node === "object" && node !== null && !Array.isArray(node);
}

function malformed(path: string, detail: string): ValidationError {
  return new ValidationError(`malformed serialized data at ${path}: ${detail}`, { param: path });
}

function toBase64(bytes: Uint8Array): string {
  let binary = "";
  // Chunks keep String.fromCharCode under the engine's argument limit.
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(binary);
}

function fromBase64(payload: Json | undefined, path: string): Uint8Array<ArrayBuffer> {
  if (typeof payload !== "string") throw malformed(path, "binary payload must be a base64 string");
  let binary: string;
  try {
    binary = atob(payload);
  } catch {
    throw malformed(path, "binary payload is not valid base64");
  }
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/** Options of {@link toJson}. */
export interface ToJsonOptions {
  /** Indent with two spaces (default false: one line). */
  pretty?: boolean;
}

/**
 * Plain JSON text of `data`. Beyond `JSON.stringify`: bigint becomes a decimal string, Map an
 * object (or an array of pairs when a key is not a string), Set and typed arrays arrays; a circular
 * reference, a top-level `undefined`, a function or a symbol raises `ValidationError`.
 *
 * @example
 * ```ts
 * toJson({ a: 1, big: 2n }); // '{"a":1,"big":"2"}'
 * toJson({ a: [1] }, { pretty: true });
 * ```
 */
export function toJson(data: unknown, options: ToJsonOptions = {}): string {
  if (data === undefined || typeof data === "function" || typeof data === "symbol") {
    throw new ValidationError(`cannot convert ${typeof data} to JSON`);
  }
  // Ancestors of the value being converted: `holder` is what JSON.stringify recurses into (our
  // replacement for a Map/Set), `original` what the user passed, for cycle detection.
  const stack: { holder: unknown; original: unknown }[] = [];
  const replacer = function (this: unknown, _key: string, value: unknown): unknown {
    if (typeof value === "bigint") return value.toString();
    if (typeof value !== "object" || value === null) return value;
    // JSON.stringify calls the replacer with `this` = the holder: trim the stack down to it.
    while (stack.length > 0 && stack[stack.length - 1].holder !== this) stack.pop();
    if (stack.some((entry) => entry.original === value)) {
      throw new ValidationError("cannot convert a circular reference to JSON");
    }
    let holder: unknown = value;
    if (value instanceof Map) {
      const keys = [...value.keys()];
      holder = keys.every((k) => typeof k === "string") ? Object.fromEntries(value) : [...value];
    } else if (value instanceof Set) {
      holder = [...value];
    } else if (ArrayBuffer.isView(value) && !(value instanceof DataView)) {
      holder = Array.from(value as unknown as ArrayLike<number | bigint>);
    }
    stack.push({ holder, original: value });
    return holder;
  };
  return JSON.stringify(data, replacer, options.pretty ? 2 : undefined);
}

/**
 * Parses JSON text. Malformed text raises `ValidationError` that names the line, column and
 * character position of the problem.
 *
 * @example
 * ```ts
 * fromJson('{"a": [1, 2]}'); // { a: [1, 2] }
 * ```
 */
export function fromJson(text: string): unknown {
  if (typeof text !== "string") {
    throw new ValidationError(`expected JSON text (a string), got ${typeof text}`);
  }
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  try {
    return JSON.parse(body);
  } catch (err) {
    const detail = (err as Error).message;
    const found = findJsonErrorPosition(body);
    const v8 = /position (\d+)/.exec(detail);
    const position = found >= 0 ? found : v8 ? Number(v8[1]) : body.length;
    const before = body.slice(0, position);
    const line = before.split("\n").length;
    const column = position - before.lastIndexOf("\n");
    const what = position >= body.length
      ? "unexpected end of input"
      : `unexpected ${JSON.stringify(body[position])}`;
    throw new ValidationError(
      `malformed JSON at line ${line}, column ${column} (position ${position}): ${what}`,
      { cause: err },
    );
  }
}
