/**
 * A small, fast, seeded pseudo-random generator for sampling: xoshiro128** (Blackman & Vigna)
 * seeded through splitmix64. Pure 32-bit integer arithmetic, so the same seed yields the same
 * sequence in every process, on every platform and Deno version.
 *
 * @module
 */

import { ValidationError } from "../../core/errors.ts";

const MASK_64 = (1n << 64n) - 1n;
const GOLDEN_GAMMA = 0x9e3779b97f4a7c15n;
// Odd constant, so distinct streams of one seed start splitmix64 at distinct states.
const STREAM_MULTIPLIER = 0xd1b54a32d192ed03n;
const TWO_POW_26 = 67108864;
const TWO_POW_53 = 9007199254740992;

/** Options of {@link Rng}. */
export interface RngOptions {
  /**
   * Index of an independent stream of the same seed, e.g. the choice index when a request with
   * one seed asks for `n > 1` completions. Stream 0 is the plain seed. Default 0.
   */
  stream?: number;
}

function splitmix64(state: bigint): [bigint, bigint] {
  const next = (state + GOLDEN_GAMMA) & MASK_64;
  let z = next;
  z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & MASK_64;
  z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & MASK_64;
  return [next, z ^ (z >> 31n)];
}

function checkInteger(value: number, what: string, param?: string): void {
  if (!Number.isInteger(value)) {
    throw new ValidationError(`${what} must be an integer, got ${value}`, { param });
  }
}

/**
 * Seeded generator of uniform random numbers. Without a seed it draws its seed from
 * `crypto.getRandomValues`.
 *
 * Integer seeds of any size and sign are accepted and reduced modulo 2^64 (OpenAI's `seed` is an
 * int64; JSON numbers past 2^53 are already rounded by the parser, which is deterministic too).
 *
 * @example
 * ```ts
 * import { Rng } from "./rng.ts";
 * const a = new Rng(42);
 * const b = new Rng(42);
 * console.log(a.nextFloat() === b.nextFloat()); // true
 * ```
 */
export class Rng {
  /** The seed this generator started from (drawn at random when none was given). */
  readonly seed: number | bigint;
  /** The stream index of this generator. */
  readonly stream: number;
  #s0 = 0;
  #s1 = 0;
  #s2 = 0;
  #s3 = 0;

  constructor(seed?: number, options: RngOptions = {}) {
    const stream = options.stream ?? 0;
    checkInteger(stream, "the RNG stream index");
    let seed64: bigint;
    if (seed === undefined) {
      const words = crypto.getRandomValues(new Uint32Array(2));
      seed64 = (BigInt(words[0]) << 32n) | BigInt(words[1]);
      this.seed = seed64;
    } else {
      checkInteger(seed, "seed", "seed");
      seed64 = BigInt(seed) & MASK_64;
      this.seed = seed;
    }
    this.stream = stream;
    let state = (seed64 + BigInt(stream) * STREAM_MULTIPLIER) & MASK_64;
    let a: bigint, b: bigint;
    [state, a] = splitmix64(state);
    [state, b] = splitmix64(state);
    this.#s0 = Number(a & 0xffffffffn) | 0;
    this.#s1 = Number(a >> 32n) | 0;
    this.#s2 = Number(b & 0xffffffffn) | 0;
    this.#s3 = Number(b >> 32n) | 0;
    // xoshiro must not start all-zero (splitmix64 makes that practically unreachable).
    if ((this.#s0 | this.#s1 | this.#s2 | this.#s3) === 0) this.#s0 = 1;
  }

  /** The generator's position: four 32-bit words, to continue it elsewhere with {@link restore}. */
  state(): [number, number, number, number] {
    return [this.#s0, this.#s1, this.#s2, this.#s3];
  }

  /** Continues from a position {@link state} returned (of a generator of the same seed). */
  restore(state: readonly number[]): void {
    [this.#s0, this.#s1, this.#s2, this.#s3] = state.map((w) => w | 0);
  }

  /**
   * Next 32-bit unsigned integer, uniform over [0, 2^32).
   *
   * @example
   * ```ts
   * import { Rng } from "./rng.ts";
   * const word = new Rng(7).nextUint32();
   * console.log(word < 2 ** 32); // true
   * ```
   */
  nextUint32(): number {
    const s1 = this.#s1;
    const result = Math.imul(rotl(Math.imul(s1, 5), 7), 9);
    const t = s1 << 9;
    this.#s2 ^= this.#s0;
    this.#s3 ^= this.#s1;
    this.#s1 ^= this.#s2;
    this.#s0 ^= this.#s3;
    this.#s2 ^= t;
    this.#s3 = rotl(this.#s3, 11);
    return result >>> 0;
  }

  /**
   * Next float uniform over [0, 1) with 53 random bits (two 32-bit draws).
   *
   * @example
   * ```ts
   * import { Rng } from "./rng.ts";
   * const u = new Rng(7).nextFloat();
   * console.log(u >= 0 && u < 1); // true
   * ```
   */
  nextFloat(): number {
    const hi = this.nextUint32() >>> 5; // 27 bits
    const lo = this.nextUint32() >>> 6; // 26 bits
    return (hi * TWO_POW_26 + lo) / TWO_POW_53;
  }
}

function rotl(x: number, k: number): number {
  return (x << k) | (x >>> (32 - k));
}
