// Assertions for tests: JSR's @std/assert is unreachable here, so node:assert/strict stands in
// under the same names. Switching to @std/assert later is a change to this file only.
import assertNode from "node:assert/strict";

// `as string`: with transformers.js' types in the program, @types/node's assert overloads take no
// `string | undefined` message; node:assert accepts undefined at run time.

export function assert(value: unknown, message?: string): asserts value {
  assertNode.ok(value, message as string);
}
export function assertEquals<T>(actual: T, expected: T, message?: string): void {
  assertNode.deepStrictEqual(actual, expected, message as string);
}
export function assertNotEquals<T>(actual: T, expected: T, message?: string): void {
  assertNode.notDeepStrictEqual(actual, expected, message as string);
}
export function assertMatch(actual: string, expected: RegExp, message?: string): void {
  assertNode.match(actual, expected, message as string);
}
export function assertAlmostEquals(actual: number, expected: number, tolerance = 1e-7): void {
  assertNode.ok(
    Math.abs(actual - expected) <= tolerance,
    `expected ${actual} to be within ${tolerance} of ${expected}`,
  );
}
/** Asserts `fn` throws (or rejects with) an instance of `ErrorClass`; returns the error. */
export async function assertRejects<E extends Error>(
  fn: () => unknown,
  // deno-lint-ignore no-explicit-any
  ErrorClass: new (...args: any[]) => E,
  messageIncludes?: string,
): Promise<E> {
  try {
    await fn();
  } catch (err) {
    return checkError(err, ErrorClass, messageIncludes);
  }
  throw new assertNode.AssertionError({ message: `expected ${ErrorClass.name} to be thrown` });
}
/** Synchronous form of {@link assertRejects}. */
export function assertThrows<E extends Error>(
  fn: () => unknown,
  // deno-lint-ignore no-explicit-any
  ErrorClass: new (...args: any[]) => E,
  messageIncludes?: string,
): E {
  try {
    fn();
  } catch (err) {
    return checkError(err, ErrorClass, messageIncludes);
  }
  throw new assertNode.AssertionError({ message: `expected ${ErrorClass.name} to be thrown` });
}

function checkError<E extends Error>(
  err: unknown,
  // deno-lint-ignore no-explicit-any
  ErrorClass: new (...args: any[]) => E,
  messageIncludes: string | undefined,
): E {
  assertNode.ok(err instanceof ErrorClass, `expected ${ErrorClass.name}, got ${err}`);
  if (messageIncludes !== undefined) {
    assertNode.ok(
      (err as Error).message.includes(messageIncludes),
      `expected message to include "${messageIncludes}", got "${(err as Error).message}"`,
    );
  }
  return err as E;
}
