/**
 * How many more characters a pattern's NFA needs from each state to match: the fewest and the
 * most (Infinity when a loop that reads text lies on the way). The pattern automaton uses them so
 * constrained decoding never takes a character after which the string cannot end within its
 * `minLength`/`maxLength`, or cannot end at all (a branch that needs a lone surrogate, which text
 * cannot hold): such a step would leave the grammar with no token to allow.
 *
 * @module
 */

/** An NFA state: a set of code points it reads (null: an epsilon state), and where it goes. */
export interface NfaNode {
  readonly set: readonly number[] | null;
  readonly out: readonly number[];
}

/** Per state, the fewest and most characters it reads on its way to `match`. */
export interface NfaLengths {
  /** Infinity where `match` cannot be reached. */
  readonly min: Float64Array;
  /** -Infinity where `match` cannot be reached. */
  readonly max: Float64Array;
}

// An edge reads a character when its state has a non-empty set, none when it is an epsilon.
function weight(node: NfaNode): number {
  return node.set === null ? 0 : node.set.length > 0 ? 1 : -1;
}

/** The lengths of every state of `states` (a state with an empty set reads nothing: a dead end). */
export function nfaLengths(states: readonly NfaNode[], match: number): NfaLengths {
  const n = states.length;
  const into: number[][] = Array.from({ length: n }, () => []);
  states.forEach((node, q) => {
    if (weight(node) >= 0) { for (const t of node.out) into[t].push(q); }
  });
  // Fewest: 0-1 breadth-first search backwards from the match state.
  const min = new Float64Array(n).fill(Infinity);
  min[match] = 0;
  const deque = [match];
  for (let head = 0; head < deque.length;) {
    const t = deque[head++];
    for (const q of into[t]) {
      const d = min[t] + weight(states[q]);
      if (d < min[q]) {
        min[q] = d;
        deque.push(q); // a later, shorter visit of q is processed again
      }
    }
  }
  return { min, max: longest(states, min) };
}

// Most: over the states that reach `match`, by strongly connected components (Tarjan, iterative:
// 20,000 states are too deep for recursion). A component with a reading edge inside loops.
function longest(states: readonly NfaNode[], min: Float64Array): Float64Array {
  const n = states.length;
  const live = (q: number) => min[q] !== Infinity;
  const max = new Float64Array(n).fill(-Infinity);
  const index = new Int32Array(n).fill(-1), low = new Int32Array(n), onStack = new Uint8Array(n);
  const stack: number[] = [];
  let counter = 0;
  for (let root = 0; root < n; root++) {
    if (!live(root) || index[root] >= 0) continue;
    const work: [number, number][] = [[root, 0]];
    while (work.length > 0) {
      const frame = work[work.length - 1];
      const [q, i] = frame;
      if (i === 0) {
        index[q] = low[q] = counter++;
        stack.push(q);
        onStack[q] = 1;
      }
      const outs = weight(states[q]) >= 0 ? states[q].out : [];
      if (i < outs.length) {
        frame[1]++;
        const t = outs[i];
        if (!live(t)) continue;
        if (index[t] < 0) work.push([t, 0]);
        else if (onStack[t]) low[q] = Math.min(low[q], index[t]);
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1][0];
        low[parent] = Math.min(low[parent], low[q]);
      }
      if (low[q] !== index[q]) continue;
      // q roots a component; every component it leads to is finished already.
      const members: number[] = [];
      for (let m = -1; m !== q;) {
        m = stack.pop()!;
        onStack[m] = 0;
        members.push(m);
      }
      const inside = new Set(members);
      let best = -Infinity;
      for (const m of members) {
        if (min[m] === 0 && states[m].out.length === 0) best = Math.max(best, 0); // the match
        const w = weight(states[m]);
        if (w < 0) continue;
        for (const t of states[m].out) {
          if (!live(t)) continue;
          if (inside.has(t)) best = w > 0 ? Infinity : best;
          else best = Math.max(best, w + max[t]);
        }
      }
      for (const m of members) max[m] = best;
    }
  }
  return max;
}
