// Partial selection of the k largest entries of a logits row, without sorting the whole vocabulary.
// Order: value descending, then token id ascending (so ties always resolve to the lowest id).
// NaN entries are never selected before numbers (they compare as smaller than everything).

// Below this k a single scan with a small sorted buffer wins: most entries are rejected by one
// comparison against the current k-th value. Above it, a quickselect of the k-th value over a copy
// (O(n) on average), a pass collecting the entries above it, and a sort of those k only.
const SCAN_LIMIT = 128;

let valueScratch = new Float32Array(0);

/** True when entry `a` ranks before entry `b`. */
function before(values: ArrayLike<number>, a: number, b: number): boolean {
  const va = values[a];
  const vb = values[b];
  if (va > vb) return true;
  if (va < vb) return false;
  if (va === vb) return a < b;
  // At least one NaN: numbers rank before NaN, NaNs by id.
  const aNaN = va !== va;
  const bNaN = vb !== vb;
  if (aNaN !== bNaN) return bNaN;
  return a < b;
}

/**
 * Writes the ids of the `k` top entries of `values`, best first, into `out[0..k)` and returns how
 * many were written (`min(k, values.length)`). `out` must hold at least that many entries.
 */
export function selectTop(values: ArrayLike<number>, k: number, out: Int32Array): number {
  const n = values.length;
  const count = Math.min(k, n);
  if (count <= 0) return 0;
  if (count <= SCAN_LIMIT && scanTop(values, count, out)) return count;
  return quickTop(values, count, out);
}

// Returns false (giving up) when too many entries displace others, as with ascending logits.
function scanTop(values: ArrayLike<number>, count: number, out: Int32Array): boolean {
  let filled = 0;
  let budget = count * 64 + 4096;
  const n = values.length;
  for (let i = 0; i < n; i++) {
    if (filled === count) {
      // Ids arrive in ascending order, so an equal value never displaces an earlier id.
      const last = values[out[count - 1]];
      const v = values[i];
      if (!(v > last) && (last === last || v !== v)) continue;
      if (--budget === 0) return false;
      filled--;
    } else if (filled > 0 && !before(values, i, out[filled - 1])) {
      out[filled++] = i;
      continue;
    }
    let j = filled;
    while (j > 0 && before(values, i, out[j - 1])) {
      out[j] = out[j - 1];
      j--;
    }
    out[j] = i;
    filled++;
  }
  return true;
}

function quickTop(values: ArrayLike<number>, count: number, out: Int32Array): number {
  const n = values.length;
  if (valueScratch.length < n) valueScratch = new Float32Array(n);
  const copy = valueScratch;
  for (let i = 0; i < n; i++) {
    const v = values[i];
    copy[i] = v === v ? v : -Infinity;
  }
  // The count-th largest value; everything above it is in, ties at it go to the lowest ids.
  const kth = nthLargest(copy, n, count - 1);
  let filled = 0;
  for (let i = 0; i < n; i++) if (values[i] > kth) out[filled++] = i;
  for (let i = 0; i < n && filled < count; i++) {
    const v = values[i];
    if (v === kth || (kth === -Infinity && v !== v)) out[filled++] = i;
  }
  // Mostly ascending ids already; V8's TimSort is fast on such runs.
  out.subarray(0, count).sort((a, b) => (before(values, a, b) ? -1 : before(values, b, a) ? 1 : 0));
  return count;
}

// Value of rank `rank` (0 = largest) of a[0..n); reorders `a`. Hoare quickselect, median of three.
function nthLargest(a: Float32Array, n: number, rank: number): number {
  let lo = 0;
  let hi = n - 1;
  while (hi > lo) {
    const mid = lo + ((hi - lo) >> 1);
    const x = a[lo], y = a[mid], z = a[hi];
    const pivot = x > y ? (y > z ? y : x > z ? z : x) : (x > z ? x : y > z ? z : y);
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (a[i] > pivot) i++;
      while (a[j] < pivot) j--;
      if (i <= j) {
        const t = a[i];
        a[i] = a[j];
        a[j] = t;
        i++;
        j--;
      }
    }
    if (rank <= j) hi = j;
    else if (rank >= i) lo = i;
    else return a[rank];
  }
  return a[rank];
}
