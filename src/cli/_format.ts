/**
 * Printing helpers shared by the CLI commands: human-readable sizes, durations and rates, plain
 * text tables, and a download progress bar that redraws in place on a terminal and prints plain
 * lines otherwise.
 *
 * @module
 */

const UNITS = ["B", "KiB", "MiB", "GiB", "TiB"] as const;

/**
 * Bytes in binary units with three significant digits.
 *
 * @example
 * ```ts
 * formatBytes(1536); // "1.50 KiB"
 * ```
 */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 0) return "?";
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  if (unit === 0) return `${bytes} B`;
  const digits = value >= 100 ? 0 : value >= 10 ? 1 : 2;
  return `${value.toFixed(digits)} ${UNITS[unit]}`;
}

/**
 * A duration in seconds as `42s`, `3m05s` or `2h07m`; `--` when unknown or not finite.
 *
 * @example
 * ```ts
 * formatDuration(185); // "3m05s"
 * ```
 */
export function formatDuration(seconds: number | null): string {
  if (seconds === null || !Number.isFinite(seconds) || seconds < 0) return "--";
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
  const h = Math.floor(s / 3600);
  return `${h}h${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`;
}

/**
 * A transfer rate, e.g. `2.50 MiB/s`; `--` when unknown.
 *
 * @example
 * ```ts
 * formatRate(2.5 * 1024 * 1024); // "2.50 MiB/s"
 * ```
 */
export function formatRate(bytesPerSecond: number | null): string {
  if (bytesPerSecond === null || !Number.isFinite(bytesPerSecond)) return "--";
  return `${formatBytes(Math.round(bytesPerSecond))}/s`;
}

/** Options of {@link formatTable}. */
export interface TableOptions {
  /** Column indexes to right-align (numbers, sizes). */
  alignRight?: number[];
}

/**
 * Renders rows as a plain text table: a header, a dashed rule, and columns padded to the widest
 * cell (two spaces apart, no trailing spaces).
 *
 * @example
 * ```ts
 * console.log(formatTable(["ID", "SIZE"], [["demo/chat", "4.20 MiB"]], { alignRight: [1] }));
 * ```
 */
export function formatTable(
  header: string[],
  rows: string[][],
  options: TableOptions = {},
): string {
  const right = new Set(options.alignRight ?? []);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]): string =>
    cells.map((cell, i) => {
      const last = i === header.length - 1;
      if (right.has(i)) return cell.padStart(widths[i]);
      return last ? cell : cell.padEnd(widths[i]);
    }).join("  ").trimEnd();
  return [line(header), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)].join("\n");
}

/** Options of {@link ProgressBar}. */
export interface ProgressBarOptions {
  /** Draw in place with `\r` (a terminal) or print plain lines (a pipe, a log file). */
  tty: boolean;
  /** Where the text goes (default: standard error, so stdout stays clean for scripts). */
  write?: (text: string) => void;
  /** Clock in ms (default `performance.now`); injectable for tests. */
  now?: () => number;
  /** Least ms between two redraws on a terminal; default 100. */
  ttyIntervalMs?: number;
  /** Least ms between two plain progress lines; default 2000. */
  plainIntervalMs?: number;
  /** Width of the bar in characters; default 24. */
  barWidth?: number;
  /** Speed is averaged over this window in ms; default 3000. */
  windowMs?: number;
  /** Terminal width: longer lines are cut to fit, so `\r` redraws stay on one line. */
  columns?: number;
}

/** One progress sample: bytes done and the total (null while unknown). */
export interface ProgressSample {
  done: number;
  total: number | null;
  /** Short text before the bar, e.g. the file or the model id. */
  label?: string;
}

/**
 * A byte progress bar with speed and ETA. On a terminal it redraws one line in place (`\r`,
 * throttled); otherwise it prints a plain line at most every `plainIntervalMs`. Speed is the
 * average over the last few seconds, so a stall shows as a falling speed rather than a frozen one.
 *
 * @example
 * ```ts
 * const bar = new ProgressBar({ tty: Deno.stderr.isTerminal() });
 * bar.update({ done: 512, total: 2048, label: "model.onnx" });
 * bar.finish("done");
 * ```
 */
export class ProgressBar {
  #tty: boolean;
  #write: (text: string) => void;
  #now: () => number;
  #ttyInterval: number;
  #plainInterval: number;
  #barWidth: number;
  #windowMs: number;
  #columns: number | undefined;
  #samples: { t: number; done: number }[] = [];
  #lastDraw = -Infinity;
  #lastWidth = 0;
  #last: ProgressSample | null = null;
  #pending = false;

  /** A bar writing per `options`. */
  constructor(options: ProgressBarOptions) {
    this.#tty = options.tty;
    const encoder = new TextEncoder();
    this.#write = options.write ?? ((text) => Deno.stderr.writeSync(encoder.encode(text)));
    this.#now = options.now ?? (() => performance.now());
    this.#ttyInterval = options.ttyIntervalMs ?? 100;
    this.#plainInterval = options.plainIntervalMs ?? 2000;
    this.#barWidth = options.barWidth ?? 24;
    this.#windowMs = options.windowMs ?? 3000;
    this.#columns = options.columns;
  }

  /** Records a sample and redraws when the throttle allows (`force` draws regardless). */
  update(sample: ProgressSample, force = false): void {
    const t = this.#now();
    this.#samples.push({ t, done: sample.done });
    while (this.#samples.length > 2 && t - this.#samples[1].t >= this.#windowMs) {
      this.#samples.shift();
    }
    this.#last = sample;
    this.#pending = true;
    const interval = this.#tty ? this.#ttyInterval : this.#plainInterval;
    if (!force && t - this.#lastDraw < interval) return;
    this.#lastDraw = t;
    this.#draw(this.render(sample));
  }

  /** Bytes per second over the recent window; null until two samples are apart in time. */
  speed(): number | null {
    const first = this.#samples[0];
    const last = this.#samples[this.#samples.length - 1];
    if (!first || !last || last.t - first.t <= 0) return null;
    return Math.max(0, ((last.done - first.done) * 1000) / (last.t - first.t));
  }

  /** The progress line for `sample` (without `\r` or newline). */
  render(sample: ProgressSample): string {
    const speed = this.speed();
    const parts: string[] = [];
    if (sample.label) parts.push(sample.label);
    if (sample.total !== null && sample.total > 0) {
      const ratio = Math.min(1, sample.done / sample.total);
      const filled = Math.round(ratio * this.#barWidth);
      parts.push(`[${"#".repeat(filled)}${"-".repeat(this.#barWidth - filled)}]`);
      parts.push(`${(ratio * 100).toFixed(0).padStart(3)}%`);
      parts.push(`${formatBytes(sample.done)} / ${formatBytes(sample.total)}`);
    } else {
      parts.push(formatBytes(sample.done));
    }
    parts.push(formatRate(speed));
    const remaining = sample.total === null ? null : Math.max(0, sample.total - sample.done);
    const eta = remaining === null || speed === null || speed === 0
      ? (remaining === 0 ? 0 : null)
      : remaining / speed;
    parts.push(`ETA ${formatDuration(eta)}`);
    return parts.join("  ");
  }

  /**
   * Prints a message on its own line: on a terminal the bar line is cleared first and redrawn
   * after, so messages and the bar never mix.
   */
  log(message: string): void {
    if (this.#tty && this.#lastWidth > 0) {
      this.#write(`\r${" ".repeat(this.#lastWidth)}\r${message}\n`);
      this.#lastWidth = 0;
      if (this.#last) this.#draw(this.render(this.#last));
      return;
    }
    this.#write(`${message}\n`);
  }

  /** Draws the final state (when not drawn yet) and ends the line; then prints `message`. */
  finish(message?: string): void {
    if (this.#last && this.#pending) this.#draw(this.render(this.#last));
    if (this.#tty && this.#lastWidth > 0) this.#write("\n");
    this.#lastWidth = 0;
    if (message) this.#write(`${message}\n`);
  }

  #draw(line: string): void {
    this.#pending = false;
    if (!this.#tty) {
      this.#write(`${line}\n`);
      return;
    }
    if (this.#columns !== undefined && line.length > this.#columns - 1) {
      line = `…${line.slice(line.length - (this.#columns - 2))}`;
    }
    // Pad with spaces so a shorter line fully covers the previous one.
    const pad = Math.max(0, this.#lastWidth - line.length);
    this.#write(`\r${line}${" ".repeat(pad)}`);
    this.#lastWidth = line.length + pad;
  }
}
