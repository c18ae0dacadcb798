/**
 * The top-level `usage` of a JSON answer, read from its bytes without parsing the rest: answers
 * carry it last, after choices that can hold tens of MB (a prompt's log-probabilities), which the
 * gateway only passes on. Decoding and parsing a 12 MB answer whole held the gateway's thread
 * ~0.5 s, and every client of the gateway waited.
 *
 * @module
 */

import { sleep } from "../core/sleep.ts";

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const USAGE_KEY = new TextEncoder().encode('"usage"');
const UTF8 = new TextDecoder();

/** Bytes read between two turns of the event loop. */
const SLICE_BYTES = 1 << 20;

/** A member that is not `usage`. */
const OTHER = Symbol("other member");

/**
 * The parsed value of the last top-level `usage` member of the JSON object in `bytes` (what
 * `JSON.parse(text).usage` gives), or undefined when there is none or the bytes are no JSON
 * object. Members are read from the end, so finding it usually costs a few hundred bytes; when it
 * comes first, other work runs between slices of the rest.
 */
export async function answerUsage(bytes: Uint8Array): Promise<unknown> {
  let end = bytes.length - 1;
  while (end >= 0 && isSpace(bytes[end])) end--;
  if (end < 0 || bytes[end] !== CLOSE_OBJECT) return undefined;
  let depth = 0; // within the top-level object
  let inString = false;
  let memberEnd = end; // where the member being read ends (its ',' or the closing '}')
  let left = SLICE_BYTES;
  for (let i = end - 1; i >= 0; i--) {
    if (--left === 0) {
      await sleep(0);
      left = SLICE_BYTES;
    }
    const b = bytes[i];
    // In JSON a backslash is only ever an escape inside a string: a quote after an odd number of
    // them is part of the string, read from either end.
    if (b === QUOTE && !escaped(bytes, i)) inString = !inString;
    else if (inString) continue;
    else if (b === CLOSE_OBJECT || b === CLOSE_ARRAY) depth++;
    else if (depth > 0 && (b === OPEN_OBJECT || b === OPEN_ARRAY)) depth--;
    else if (depth === 0 && (b === COMMA || b === OPEN_OBJECT)) {
      const value = usageMember(bytes, i + 1, memberEnd);
      if (value !== OTHER) return value;
      if (b === OPEN_OBJECT) return undefined;
      memberEnd = i;
    } else if (depth === 0 && b === OPEN_ARRAY) return undefined;
  }
  return undefined;
}

// The parsed value of the member `"usage": value` in bytes[start, end), or OTHER.
function usageMember(bytes: Uint8Array, start: number, end: number): unknown {
  while (start < end && isSpace(bytes[start])) start++;
  if (end - start < USAGE_KEY.length) return OTHER;
  for (let k = 0; k < USAGE_KEY.length; k++) {
    if (bytes[start + k] !== USAGE_KEY[k]) return OTHER;
  }
  let colon = start + USAGE_KEY.length;
  while (colon < end && isSpace(bytes[colon])) colon++;
  if (bytes[colon] !== COLON) return OTHER;
  try {
    return JSON.parse(UTF8.decode(bytes.subarray(colon + 1, end)));
  } catch {
    return undefined;
  }
}

function escaped(bytes: Uint8Array, quote: number): boolean {
  let backslashes = 0;
  for (let i = quote - 1; i >= 0 && bytes[i] === BACKSLASH; i--) backslashes++;
  return backslashes % 2 === 1;
}

function isSpace(b: number): boolean {
  return b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;
}
