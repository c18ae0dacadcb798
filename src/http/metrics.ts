/**
 * A small Prometheus metrics registry (counters, gauges, histograms with labels) rendered in the
 * text exposition format. The engine server and the gateway share it; asking twice for the same
 * metric returns the same object, so several apps can register into one registry.
 *
 * @module
 */

/** Label values by label name. */
export type Labels = Readonly<Record<string, string | number>>;

/** Default latency buckets in seconds (1 ms to 2 min). */
export const LATENCY_BUCKETS: readonly number[] = [
  0.001,
  0.0025,
  0.005,
  0.01,
  0.025,
  0.05,
  0.1,
  0.25,
  0.5,
  1,
  2.5,
  5,
  10,
  30,
  60,
  120,
];

/** Methods that keep their own `method` label value; any other is `other`. */
const KNOWN_METHODS: ReadonlySet<string> = new Set([
  "GET",
  "HEAD",
  "POST",
  "PUT",
  "DELETE",
  "PATCH",
  "OPTIONS",
]);

/**
 * The `method` label of a request: a label value lives as long as the process, so a method
 * string a client made up must not become one (CVE-2022-21698's bug class).
 *
 * @example
 * ```ts
 * import { methodLabel } from "./metrics.ts";
 * methodLabel("POST"); // "POST"
 * methodLabel("FOO123"); // "other"
 * ```
 */
export function methodLabel(method: string): string {
  return KNOWN_METHODS.has(method) ? method : "other";
}

/**
 * The `status` label of a response: a number 100-599, else `other`.
 *
 * @example
 * ```ts
 * import { statusLabel } from "./metrics.ts";
 * statusLabel(404); // "404"
 * statusLabel(1000); // "other"
 * ```
 */
export function statusLabel(status: number): string {
  return Number.isInteger(status) && status >= 100 && status <= 599 ? String(status) : "other";
}

const NAME_RE = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_RE = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** A Prometheus metric family with labels. */
export abstract class Metric<S> {
  /** Metric name. */
  readonly name: string;
  /** Help text. */
  readonly help: string;
  /** Label names, in order. */
  readonly labelNames: readonly string[];
  /** Prometheus type. */
  abstract readonly type: "counter" | "gauge" | "histogram";
  /** Values by label values. */
  protected readonly series: Map<string, { labels: string[]; value: S }> = new Map();

  /** A family with no series yet. */
  constructor(name: string, help: string, labelNames: readonly string[]) {
    if (!NAME_RE.test(name)) throw new TypeError(`invalid metric name '${name}'`);
    for (const l of labelNames) {
      if (!LABEL_RE.test(l) || l === "le") throw new TypeError(`invalid label name '${l}'`);
    }
    this.name = name;
    this.help = help;
    this.labelNames = [...labelNames];
  }

  /** The series of `labels`, made with `init` if new. */
  protected entry(labels: Labels | undefined, init: () => S): { labels: string[]; value: S } {
    const values = this.labelNames.map((n) => String(labels?.[n] ?? ""));
    const key = values.join("\u0001");
    let e = this.series.get(key);
    if (e === undefined) {
      e = { labels: values, value: init() };
      this.series.set(key, e);
    }
    return e;
  }

  /** Labels as Prometheus writes them. */
  protected labelText(values: readonly string[], extra?: [string, string]): string {
    const parts = this.labelNames.map((n, i) => `${n}="${escapeLabel(values[i])}"`);
    if (extra) parts.push(`${extra[0]}="${escapeLabel(extra[1])}"`);
    return parts.length > 0 ? `{${parts.join(",")}}` : "";
  }

  /** Forgets every series (e.g. before a collector re-fills a gauge). */
  reset(): void {
    this.series.clear();
  }

  /** Appends this metric's exposition lines. */
  render(out: string[]): void {
    out.push(`# HELP ${this.name} ${this.help.replace(/\\/g, "\\\\").replace(/\n/g, "\\n")}`);
    out.push(`# TYPE ${this.name} ${this.type}`);
    this.renderSeries(out);
  }

  /** Appends the series' lines to `out`. */
  protected abstract renderSeries(out: string[]): void;
}

/** A value that only goes up (requests, tokens). */
export class Counter extends Metric<{ v: number }> {
  /** Prometheus type. */
  readonly type = "counter";
  /** Adds `value` (default 1) to the series of `labels`. */
  inc(value = 1, labels?: Labels): void {
    if (!(value >= 0)) throw new RangeError(`counter ${this.name} cannot go down (${value})`);
    this.entry(labels, () => ({ v: 0 })).value.v += value;
  }
  /** Current value of the series of `labels` (0 if never touched). */
  get(labels?: Labels): number {
    return this.entry(labels, () => ({ v: 0 })).value.v;
  }
  /** Appends the series' lines to `out`. */
  protected renderSeries(out: string[]): void {
    for (const s of this.series.values()) {
      out.push(`${this.name}${this.labelText(s.labels)} ${formatNumber(s.value.v)}`);
    }
  }
}

/** A value that goes up and down (in-flight requests, queue depth). */
export class Gauge extends Metric<{ v: number }> {
  /** Prometheus type. */
  readonly type = "gauge";
  /** Sets the series of `labels` to `value`. */
  set(value: number, labels?: Labels): void {
    this.entry(labels, () => ({ v: 0 })).value.v = value;
  }
  /** Adds `value` (default 1). */
  inc(value = 1, labels?: Labels): void {
    this.entry(labels, () => ({ v: 0 })).value.v += value;
  }
  /** Subtracts `value` (default 1). */
  dec(value = 1, labels?: Labels): void {
    this.entry(labels, () => ({ v: 0 })).value.v -= value;
  }
  /** Current value of the series of `labels`. */
  get(labels?: Labels): number {
    return this.entry(labels, () => ({ v: 0 })).value.v;
  }
  /** Appends the series' lines to `out`. */
  protected renderSeries(out: string[]): void {
    for (const s of this.series.values()) {
      out.push(`${this.name}${this.labelText(s.labels)} ${formatNumber(s.value.v)}`);
    }
  }
}

/** The values of one histogram series. */
export interface HistogramState {
  /** Count per bucket. */
  counts: number[];
  /** Sum of the observations. */
  sum: number;
  /** Number of observations. */
  count: number;
}

/** A distribution over fixed buckets (latencies, batch sizes). */
export class Histogram extends Metric<HistogramState> {
  /** Prometheus type. */
  readonly type = "histogram";
  /** Upper bounds of the buckets, ascending (`+Inf` is implied). */
  readonly buckets: readonly number[];

  /** A histogram with these bucket upper bounds. */
  constructor(name: string, help: string, labelNames: readonly string[], buckets: number[]) {
    super(name, help, labelNames);
    this.buckets = [...new Set(buckets)].sort((a, b) => a - b);
  }

  #init = (): HistogramState => ({ counts: this.buckets.map(() => 0), sum: 0, count: 0 });

  /** Records `value` once (or `times` times). */
  observe(value: number, labels?: Labels, times = 1): void {
    const s = this.entry(labels, this.#init).value;
    const i = this.buckets.findIndex((b) => value <= b);
    if (i >= 0) s.counts[i] += times;
    s.sum += value * times;
    s.count += times;
  }

  /**
   * Replaces the series of `labels` with a distribution given as (value, times seen) pairs: for
   * sources that keep their own cumulative counts (an engine's batch sizes).
   */
  setCounts(counts: Iterable<readonly [number, number]>, labels?: Labels): void {
    const s = this.entry(labels, this.#init).value;
    Object.assign(s, this.#init());
    for (const [value, times] of counts) this.observe(value, labels, times);
  }

  /** Count, sum and per-bucket (non-cumulative) counts of the series of `labels`. */
  snapshot(labels?: Labels): { count: number; sum: number; counts: readonly number[] } {
    const s = this.entry(labels, this.#init).value;
    return { count: s.count, sum: s.sum, counts: [...s.counts] };
  }

  /** Appends the series' lines to `out`. */
  protected renderSeries(out: string[]): void {
    for (const s of this.series.values()) {
      let cumulative = 0;
      this.buckets.forEach((b, i) => {
        cumulative += s.value.counts[i];
        out.push(
          `${this.name}_bucket${this.labelText(s.labels, ["le", formatNumber(b)])} ${cumulative}`,
        );
      });
      out.push(`${this.name}_bucket${this.labelText(s.labels, ["le", "+Inf"])} ${s.value.count}`);
      out.push(`${this.name}_sum${this.labelText(s.labels)} ${formatNumber(s.value.sum)}`);
      out.push(`${this.name}_count${this.labelText(s.labels)} ${s.value.count}`);
    }
  }
}

/** Options of a metric. */
export interface MetricOptions {
  /** Label names, in order. */
  labelNames?: readonly string[];
}

/**
 * Holds metrics and renders them for `GET /metrics`.
 *
 * @example
 * ```ts
 * import { MetricsRegistry } from "@svc/cli/server";
 * const registry = new MetricsRegistry();
 * const requests = registry.counter("svc_requests_total", "Requests.", { labelNames: ["route"] });
 * requests.inc(1, { route: "/v1/models" });
 * console.log(registry.render());
 * ```
 */
export class MetricsRegistry {
  /** `Content-Type` of {@link MetricsRegistry.render}'s output. */
  static readonly CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";
  #metrics = new Map<string, Counter | Gauge | Histogram>();
  #collectors = new Set<() => void>();

  /** The counter `name`, created on first use. */
  counter(name: string, help: string, options: MetricOptions = {}): Counter {
    return this.#get(name, Counter, () => new Counter(name, help, options.labelNames ?? []));
  }

  /** The gauge `name`, created on first use. */
  gauge(name: string, help: string, options: MetricOptions = {}): Gauge {
    return this.#get(name, Gauge, () => new Gauge(name, help, options.labelNames ?? []));
  }

  /** The histogram `name`, created on first use (default buckets: {@link LATENCY_BUCKETS}). */
  histogram(
    name: string,
    help: string,
    options: MetricOptions & { buckets?: readonly number[] } = {},
  ): Histogram {
    return this.#get(
      name,
      Histogram,
      () =>
        new Histogram(name, help, options.labelNames ?? [], [
          ...(options.buckets ?? LATENCY_BUCKETS),
        ]),
    );
  }

  /**
   * Runs `collect` before every render, to pull values kept elsewhere (an engine's queue depth).
   * Returns a function that removes it.
   */
  onCollect(collect: () => void): () => void {
    this.#collectors.add(collect);
    return () => this.#collectors.delete(collect);
  }

  /** Renders every metric in the Prometheus text format. A failing collector is skipped. */
  render(): string {
    for (const collect of this.#collectors) {
      try {
        collect();
      } catch {
        // A broken source must not take /metrics down; its series keep their last values.
      }
    }
    const out: string[] = [];
    for (const m of this.#metrics.values()) m.render(out);
    return out.length > 0 ? out.join("\n") + "\n" : "";
  }

  #get<M extends Counter | Gauge | Histogram>(
    name: string,
    // deno-lint-ignore no-explicit-any
    kind: new (...args: any[]) => M,
    create: () => M,
  ): M {
    const existing = this.#metrics.get(name);
    if (existing !== undefined) {
      if (!(existing instanceof kind)) {
        throw new TypeError(`metric '${name}' already exists as a ${existing.type}`);
      }
      return existing;
    }
    const metric = create();
    this.#metrics.set(name, metric);
    return metric;
  }
}

function escapeLabel(value: string): string {
  return value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
}

function formatNumber(v: number): string {
  if (v === Infinity) return "+Inf";
  if (v === -Infinity) return "-Inf";
  return String(v);
}
