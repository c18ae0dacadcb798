/**
 * Runs a {@link GrammarNode} over bytes: a nondeterministic pushdown automaton simulated as a set
 * of threads. A thread is a terminal's state plus the stack of what comes after it; `anyOf` and
 * optional parts split a thread, bytes that do not fit end it. Threads and stacks are immutable and
 * shared, so trying a byte (or a whole vocabulary trie) costs only the states that change.
 *
 * @module
 */

import { ValidationError } from "../../core/errors.ts";
import type { GrammarNode, ObjectNode, RepeatNode, SeqNode } from "./grammar.ts";
import { CLOSE_BRACE, OPEN_BRACE } from "./grammar.ts";
import { LitTerm, startNumber, startString, type Terminal, TextTerm } from "./_terminals.ts";
import { startRegexText } from "./_regex_text.ts";

/** What follows a terminal: a composite node's position, told when its child has ended. */
interface Continuation {
  readonly key: string;
  resume(tag: number, parent: Stack | null, out: Thread[], depth: number): void;
}

/** A continuation and the ones under it. */
class Stack {
  #key: string | undefined;
  constructor(readonly cont: Continuation, readonly parent: Stack | null) {}
  get key(): string {
    return this.#key ??= `${this.cont.key}/${this.parent?.key ?? ""}`;
  }
}

/** A terminal and its stack; `term === null` means the grammar has ended. */
export class Thread {
  #key: string | undefined;
  constructor(readonly term: Terminal | null, readonly stack: Stack | null) {}
  get key(): string {
    return this.#key ??= this.term === null ? "$" : `${this.term.key}|${this.stack?.key ?? ""}`;
  }
}

const END = new Thread(null, null);
// Epsilon moves in a row before the grammar must consume a byte; deeper means a cycle.
const MAX_DEPTH = 256;
/**
 * Most threads one state may hold. A schema whose alternatives overlap at every level (anyOf of
 * two $refs to the same thing, nested) could otherwise need exponentially many.
 */
export const MAX_THREADS = 4096;

/**
 * The ($ref, stack) pairs already entered for each output array: entering one again adds only
 * threads already there, and without this check `anyOf` nested n deep would cost 2^n entries.
 */
const entered = new WeakMap<Thread[], Set<string>>();

/** The threads at the start of `node`. */
export function startThreads(node: GrammarNode): Thread[] {
  const out: Thread[] = [];
  enter(node, null, out, 0);
  return bounded(dedupe(out));
}

/** The threads after `byte` (empty when no thread takes it). */
export function stepThreads(threads: readonly Thread[], byte: number): Thread[] {
  const out: Thread[] = [];
  for (const t of threads) stepThread(t, byte, out);
  return out.length > 1 ? bounded(dedupe(out)) : out;
}

function bounded(threads: Thread[]): Thread[] {
  if (threads.length <= MAX_THREADS) return threads;
  throw new ValidationError(
    `the schema is too ambiguous to enforce: its alternatives overlap so much that one point ` +
      `of the output has more than ${MAX_THREADS} ways to go on; make anyOf branches distinct`,
    { param: "response_format", code: "invalid_schema" },
  );
}

/** The threads after `bytes`, or an empty array. */
export function feedBytes(threads: readonly Thread[], bytes: Uint8Array): Thread[] {
  let current = threads as Thread[];
  for (let i = 0; i < bytes.length && current.length > 0; i++) {
    current = stepThreads(current, bytes[i]);
  }
  return current;
}

/** True when the grammar may end here. */
export function canFinish(threads: readonly Thread[]): boolean {
  return threads.some((t) => endsHere(t, 0));
}

/** True when nothing but the end may follow. */
export function mustFinish(threads: readonly Thread[]): boolean {
  return threads.length > 0 && threads.every((t) => t === END);
}

/** True when every thread is inside free text that has not read its trigger. */
export function inFreeText(threads: readonly Thread[]): boolean {
  return threads.length > 0 &&
    threads.every((t) => t.term instanceof TextTerm && !t.term.done);
}

/** A key equal for equal thread sets. */
export function stateKey(threads: readonly Thread[]): string {
  return threads.length === 1 ? threads[0].key : threads.map((t) => t.key).sort().join("#");
}

function endsHere(t: Thread, depth: number): boolean {
  if (t.term === null) return true;
  if (!t.term.canEnd || depth > MAX_DEPTH) return false;
  const next: Thread[] = [];
  finish(t.stack, t.term.tag, next, depth + 1);
  return next.some((n) => endsHere(n, depth + 1));
}

function stepThread(t: Thread, byte: number, out: Thread[]): void {
  const term = t.term;
  if (term === null) return;
  const next = term.feed(byte);
  if (next !== null) {
    // A terminal that can take nothing more ends at once, so equal states look equal.
    if (next.exhausted) finish(t.stack, next.tag, out, 0);
    else out.push(new Thread(next, t.stack));
  }
  if (term.canEnd) {
    const after: Thread[] = [];
    finish(t.stack, term.tag, after, 0);
    for (const u of after) stepThread(u, byte, out);
  }
}

function dedupe(threads: Thread[]): Thread[] {
  if (threads.length < 2) return threads;
  const seen = new Map<string, Thread>();
  for (const t of threads) if (!seen.has(t.key)) seen.set(t.key, t);
  return [...seen.values()];
}

function finish(stack: Stack | null, tag: number, out: Thread[], depth: number): void {
  if (stack === null) out.push(END);
  else stack.cont.resume(tag, stack.parent, out, depth);
}

function enter(node: GrammarNode, stack: Stack | null, out: Thread[], depth: number): void {
  if (depth > MAX_DEPTH) {
    throw new ValidationError(
      "the schema refers to itself without consuming any text (a $ref cycle through anyOf)",
      { param: "response_format" },
    );
  }
  switch (node.kind) {
    case "lit": {
      const live: number[] = [];
      node.options.forEach((o, i) => {
        if (o.length > 0) live.push(i);
        else finish(stack, node.tags[i] ?? i, out, depth + 1);
      });
      if (live.length > 0) out.push(new Thread(new LitTerm(node, live, 0), stack));
      return;
    }
    case "string":
      out.push(new Thread(startString(node), stack));
      return;
    case "number":
      out.push(new Thread(startNumber(node), stack));
      return;
    case "regex":
      out.push(new Thread(startRegexText(node), stack));
      return;
    case "text":
      out.push(new Thread(new TextTerm(node, [], false, true), stack));
      return;
    case "seq":
      if (node.items.length === 0) finish(stack, 0, out, depth + 1);
      else new SeqCont(node, 0).resume(0, stack, out, depth + 1);
      return;
    case "alt":
      for (const option of node.options) enter(option, stack, out, depth + 1);
      return;
    case "ref": {
      // Only a $ref reaches one node from several places.
      let seen = entered.get(out);
      if (seen === undefined) entered.set(out, seen = new Set());
      const key = `${node.id}|${stack?.key ?? ""}`;
      if (seen.has(key)) return;
      seen.add(key);
      enter(node.target!, stack, out, depth + 1);
      return;
    }
    case "repeat":
      if (node.min === 0) finish(stack, 0, out, depth + 1);
      if (node.max > 0) {
        enter(node.item, push(new RepeatCont(node, 1, false), stack), out, depth + 1);
      }
      return;
    case "object":
      enter(OPEN_BRACE, push(new ObjectCont(node, MEMBERS, 0, false), stack), out, depth + 1);
      return;
  }
}

function push(cont: Continuation, stack: Stack | null): Stack {
  return new Stack(cont, stack);
}

/** Before item `index` of a sequence. */
class SeqCont implements Continuation {
  readonly key: string;
  constructor(readonly node: SeqNode, readonly index: number) {
    this.key = `q${node.id}.${index}`;
  }

  resume(_tag: number, parent: Stack | null, out: Thread[], depth: number): void {
    const { items } = this.node;
    const i = this.index;
    // The last item needs no continuation of its own: its end is the sequence's end.
    const after = i + 1 < items.length ? push(new SeqCont(this.node, i + 1), parent) : parent;
    enter(items[i], after, out, depth + 1);
  }
}

/** After `count` items of a repetition (`separated`: after the separator before the next). */
class RepeatCont implements Continuation {
  readonly key: string;
  readonly count: number;
  constructor(readonly node: RepeatNode, count: number, readonly separated: boolean) {
    // Past the minimum of an unbounded repetition the exact count no longer matters.
    this.count = node.max === Infinity ? Math.min(count, node.min) : count;
    this.key = `r${node.id}.${this.count}.${separated ? 1 : 0}`;
  }

  resume(_tag: number, parent: Stack | null, out: Thread[], depth: number): void {
    const { node, count } = this;
    if (this.separated) {
      enter(node.item, push(new RepeatCont(node, count + 1, false), parent), out, depth + 1);
      return;
    }
    if (count >= node.min) finish(parent, 0, out, depth + 1);
    if (count < node.max) {
      enter(node.separator, push(new RepeatCont(node, count, true), parent), out, depth + 1);
    }
  }
}

// Object phases: between members, after a comma, after a key, after the colon.
const MEMBERS = 0, KEY = 1, COLON_NEXT = 2, VALUE = 3;

/**
 * A position in an object. `next` is the first property that may still come (MEMBERS, KEY), or
 * the property whose key was just read (COLON_NEXT, VALUE; -1 for a free key).
 */
class ObjectCont implements Continuation {
  readonly key: string;
  constructor(
    readonly node: ObjectNode,
    readonly phase: number,
    readonly next: number,
    readonly any: boolean,
  ) {
    this.key = `o${node.id}.${phase}.${next}.${any ? 1 : 0}`;
  }

  resume(tag: number, parent: Stack | null, out: Thread[], depth: number): void {
    const { node, next, any } = this;
    const d = depth + 1;
    switch (this.phase) {
      case MEMBERS: {
        if (node.firstRequired[next] === -1) enter(CLOSE_BRACE, parent, out, d);
        const more = next < node.properties.length || node.additional !== null;
        if (!more) return;
        if (any) {
          enter(node.spacing.comma, push(new ObjectCont(node, KEY, next, true), parent), out, d);
        } else new ObjectCont(node, KEY, next, true).resume(0, parent, out, d);
        return;
      }
      case KEY:
        if (node.additional !== null) {
          enter(node.names, push(new ObjectCont(node, COLON_NEXT, -1, true), parent), out, d);
        } else {
          enter(node.keys[next], push(new ObjectCont(node, COLON_NEXT, -2, true), parent), out, d);
        }
        return;
      case COLON_NEXT: {
        // A declared key reports its property's index as the literal's tag.
        const member = next === -1 ? -1 : tag;
        enter(node.spacing.colon, push(new ObjectCont(node, VALUE, member, true), parent), out, d);
        return;
      }
      case VALUE: {
        const value = next === -1 ? node.additional! : node.properties[next].value;
        const following = next === -1 ? 0 : next + 1;
        enter(value, push(new ObjectCont(node, MEMBERS, following, any), parent), out, d);
        return;
      }
    }
  }
}
