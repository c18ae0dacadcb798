/**
 * Runs one engine server (`svc llm run`) as a child process of the gateway: spawns it with scoped
 * Deno permissions, waits until its `/health` answers 200, learns its models from `/v1/models`,
 * restarts it with exponential back-off when it crashes after having been ready, and stops it
 * with SIGTERM (the engine drains) then SIGKILL after a timeout. A ready engine is probed on: one
 * whose `/health` keeps failing for `unhealthyRestartMs` (alive but wedged) is stopped that way
 * and restarted like a crashed one. A process that exits before it was ever ready (model not
 * found, port in use, missing permission) is not restarted: the supervisor goes to `error` with
 * the child's own error line as the message.
 *
 * @module
 */
import { CancelledError, errorMessage, ServiceError } from "../../core/errors.ts";
import { getLogger, type Logger } from "../../core/logging.ts";
import {
  connectHost,
  engineCommand,
  type EngineProcessSpec,
  type ProcessCommand,
  urlHost,
} from "./engine_command.ts";
import { sleep } from "../../core/sleep.ts";
import { ENGINE_INSTANCE_ENV, ENGINE_INSTANCE_HEADER } from "../../server/engine_instance.ts";

/** Lifecycle of a supervised engine. */
export type SupervisorState =
  | "idle"
  | "starting"
  | "ready"
  | "restarting"
  | "stopping"
  | "stopped"
  | "error";

/** Options of {@link EngineSupervisor}. */
export interface EngineSupervisorOptions {
  /** Builds the command line (default {@link engineCommand}). */
  command?: (spec: EngineProcessSpec) => ProcessCommand;
  /** Longest wait for readiness, downloads included (default 600000 ms). */
  readyTimeoutMs?: number;
  /** Pause between readiness probes (default 100 ms). */
  pollIntervalMs?: number;
  /** First restart delay; doubles per consecutive failure (default 500 ms). */
  restartDelayMs?: number;
  /** Longest restart delay (default 30000 ms). */
  maxRestartDelayMs?: number;
  /** Consecutive restarts that never got ready before giving up (default 5). */
  maxRestartFailures?: number;
  /** Wait after SIGTERM before SIGKILL (default 15000 ms). */
  stopTimeoutMs?: number;
  /**
   * Restart an engine that was ready and whose health probes then failed for this long (default
   * 30000 ms; 0: never). An engine still loading is never restarted by this rule.
   */
  unhealthyRestartMs?: number;
  /** Pause between health probes of a ready engine (default 5000 ms). */
  healthIntervalMs?: number;
  /** Called on every state change. */
  onStateChange?: (state: SupervisorState, supervisor: EngineSupervisor) => void;
  /** Every line the child prints (stdout and stderr). */
  onOutput?: (line: string) => void;
  /** Log of the supervisor. */
  logger?: Logger;
}

const OUTPUT_LINES = 40;
/**
 * Supervises one engine process. The gateway's engine manager makes one for each engine it starts
 * (`EngineManager.startEngine`); it has no example of its own, as no public API hands one out.
 */
export class EngineSupervisor {
  /** What it runs. */
  readonly spec: EngineProcessSpec;
  #options: EngineSupervisorOptions;
  #logger: Logger;
  #state: SupervisorState = "idle";
  #message: string | null = null;
  #child: Deno.ChildProcess | null = null;
  #outputs: Promise<void>[] = [];
  #lines: string[] = [];
  #restarts = 0;
  #models: string[] = [];
  #randomWeights = false;
  #rerankers: string[] = [];
  /** The current child's token, which its `/health` must echo (engine_instance.ts). */
  #instance = "";
  #warnedForeign = false;
  #dtype: string | null = null;
  #stop = new AbortController();
  #loop: Promise<void> | null = null;
  #firstReady: Promise<void>;
  #settleFirst!: (err?: Error) => void;

  /** A supervisor for `spec`; `start()` runs it. */
  constructor(spec: EngineProcessSpec, options: EngineSupervisorOptions = {}) {
    this.spec = spec;
    this.#options = options;
    this.#logger = options.logger ?? getLogger("gateway");
    this.#firstReady = new Promise<void>((resolve, reject) => {
      this.#settleFirst = (err) => (err ? reject(err) : resolve());
    });
    this.#firstReady.catch(() => {}); // observed through start(); never unhandled
  }

  /** Where the process is in its life. */
  get state(): SupervisorState {
    return this.#state;
  }
  /** Why the engine is in `error` or `restarting`, or null. */
  get message(): string | null {
    return this.#message;
  }
  /** Pid of the running child, or null. */
  get pid(): number | null {
    return this.#child?.pid ?? null;
  }
  /** Restarts after crashes so far. */
  get restarts(): number {
    return this.#restarts;
  }
  /** Model ids the engine listed once ready. */
  get models(): readonly string[] {
    return this.#models;
  }
  /** Those of {@link models} that rerank (they run in an embedding engine), once ready. */
  get rerankers(): readonly string[] {
    return this.#rerankers;
  }
  /** True when the engine serves a generated demo model. */
  get randomWeights(): boolean {
    return this.#randomWeights;
  }
  /** Weight precision the engine loaded (from its `/v1/models`), once ready. */
  get dtype(): string | null {
    return this.#dtype;
  }
  /** `http://host:port/v1` of the engine, as the gateway reaches it. */
  get baseUrl(): string {
    return `http://${urlHost(connectHost(this.spec.hostname))}:${this.spec.port}/v1`;
  }
  /** The last lines the child printed. */
  get output(): readonly string[] {
    return this.#lines;
  }

  /**
   * Spawns the engine and resolves once it is ready; rejects with a ServiceError carrying the
   * child's error line when it exits or times out first (nothing is left running then).
   */
  start(): Promise<void> {
    if (this.#loop === null) {
      this.#loop = this.#supervise().catch((err) => {
        this.#setState("error", errorMessage(err));
        this.#settleFirst(err instanceof Error ? err : new Error(String(err)));
      });
    }
    return this.#firstReady;
  }

  /** Stops the engine: SIGTERM (it drains), SIGKILL after `timeoutMs`; resolves when it is gone. */
  async stop(options: { timeoutMs?: number } = {}): Promise<void> {
    if (this.#state === "idle") {
      this.#setState("stopped");
      return;
    }
    const stopping = this.#state !== "stopped" && this.#state !== "error";
    if (stopping) this.#setState("stopping");
    this.#stop.abort(new CancelledError("the engine is being stopped"));
    const child = this.#child;
    if (child !== null) await this.#terminate(child, options.timeoutMs);
    await this.#loop;
    await Promise.all(this.#outputs);
    if (this.#state !== "error") this.#setState("stopped");
  }

  async #supervise(): Promise<void> {
    let everReady = false;
    let failures = 0;
    const o = this.#options;
    while (!this.#stop.signal.aborted) {
      this.#setState(everReady ? "restarting" : "starting", everReady ? this.#message : null);
      const child = this.#spawn();
      const exited = child.status;
      const outcome = await Promise.race([
        this.#waitReady(child),
        exited.then((s) => ({ kind: "exited" as const, status: s })),
      ]);
      if (this.#stop.signal.aborted) break;
      if (outcome.kind === "ready") {
        everReady = true;
        failures = 0;
        this.#setState("ready", null);
        this.#settleFirst();
        const [status, unhealthy] = await Promise.all([exited, this.#watchHealth(child)]);
        await Promise.all(this.#outputs);
        if (this.#stop.signal.aborted) break;
        if (unhealthy !== null) {
          this.#message = unhealthy; // already logged when it was stopped
        } else {
          this.#message = `the engine process exited unexpectedly (${
            describe(status)
          }); restarting`;
          this.#logger.warn(this.#message, { model: this.spec.model, port: this.spec.port });
        }
      } else {
        if (outcome.kind === "timeout") signal(child, "SIGKILL");
        const status = await exited;
        await Promise.all(this.#outputs);
        if (this.#stop.signal.aborted) break;
        const why = outcome.kind === "timeout"
          ? `it was not ready within ${o.readyTimeoutMs ?? 600_000} ms`
          : `it exited (${describe(status)})`;
        const detail = this.#errorLine();
        const message = `the ${this.spec.kind} engine for ${
          this.spec.model ?? "the default model"
        } failed to start: ${detail ?? why}`;
        if (!everReady) {
          this.#child = null;
          this.#setState("error", message);
          this.#settleFirst(new ServiceError(message, { code: "engine_start_failed" }));
          return;
        }
        failures++;
        this.#message = message;
        if (failures > (o.maxRestartFailures ?? 5)) {
          this.#child = null;
          this.#setState("error", `${message} (gave up after ${failures} restarts)`);
          return;
        }
      }
      this.#child = null;
      this.#restarts++;
      const delay = Math.min(
        o.maxRestartDelayMs ?? 30_000,
        (o.restartDelayMs ?? 500) * 2 ** failures,
      );
      this.#setState("restarting", this.#message);
      await sleep(delay, this.#stop.signal);
    }
  }

  #spawn(): Deno.ChildProcess {
    const cmd = (this.#options.command ?? engineCommand)(this.spec);
    this.#lines = [];
    this.#instance = crypto.randomUUID();
    const child = new Deno.Command(cmd.command, {
      args: cmd.args,
      env: { ...cmd.env, [ENGINE_INSTANCE_ENV]: this.#instance },
      // Never written; open while this process lives (see `--stop-with-stdin`).
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    child.status.then(() => child.stdin.close().catch(() => {}));
    this.#child = child;
    this.#outputs = [this.#read(child.stdout), this.#read(child.stderr)];
    return child;
  }

  async #read(stream: ReadableStream<Uint8Array>): Promise<void> {
    let partial = "";
    try {
      for await (const text of stream.pipeThrough(new TextDecoderStream())) {
        const parts = (partial + text).split(/\r?\n/);
        partial = parts.pop() ?? "";
        for (const line of parts) this.#line(line);
      }
    } catch {
      // The pipe broke with the process: nothing more to read.
    }
    if (partial !== "") this.#line(partial);
  }

  #line(line: string): void {
    if (line.trim() === "") return;
    this.#lines.push(line);
    if (this.#lines.length > OUTPUT_LINES) this.#lines.shift();
    this.#options.onOutput?.(line);
  }

  // The child's own explanation: its last `svc:` line that is not a progress line.
  #errorLine(): string | undefined {
    const ours = this.#lines.filter((l) =>
      l.startsWith("svc: ") && !/^svc: (loading|serving|stopping)\b/.test(l)
    );
    const line = ours.at(-1) ?? this.#lines.at(-1);
    return line?.replace(/^svc: /, "").slice(0, 500);
  }

  async #waitReady(
    child: Deno.ChildProcess,
  ): Promise<{ kind: "ready" } | { kind: "timeout" } | { kind: "exited"; status: null }> {
    const deadline = Date.now() + (this.#options.readyTimeoutMs ?? 600_000);
    const root = this.baseUrl.slice(0, -"/v1".length);
    let gone = false;
    child.status.then(() => (gone = true));
    while (!gone && !this.#stop.signal.aborted) {
      if (Date.now() > deadline) return { kind: "timeout" };
      if (await this.#probe(`${root}/health`) === null) {
        await this.#learnModels();
        return { kind: "ready" };
      }
      await sleep(this.#options.pollIntervalMs ?? 100, this.#stop.signal);
    }
    return { kind: "exited", status: null };
  }

  /** SIGTERM (the engine drains), SIGKILL after `timeoutMs`; resolves when it is gone. */
  async #terminate(child: Deno.ChildProcess, timeoutMs?: number): Promise<void> {
    signal(child, "SIGTERM");
    const timer = setTimeout(
      () => signal(child, "SIGKILL"),
      timeoutMs ?? this.#options.stopTimeoutMs ?? 15_000,
    );
    await child.status;
    clearTimeout(timer);
  }

  /**
   * Probes a ready child until it exits. An engine alive but not answering (every connection held,
   * stuck) never exits by itself: once its probes have failed for `unhealthyRestartMs`, it is
   * stopped, so the restart path replaces it. Resolves with the reason when it stopped it, else null.
   */
  async #watchHealth(child: Deno.ChildProcess): Promise<string | null> {
    const limit = this.#options.unhealthyRestartMs ?? 30_000;
    if (limit <= 0) return null;
    const exited = new AbortController();
    child.status.then(() => exited.abort());
    const done = AbortSignal.any([exited.signal, this.#stop.signal]);
    const url = `${this.baseUrl.slice(0, -"/v1".length)}/health`;
    let since: number | null = null; // when the first failing probe of the current run was sent
    while (!done.aborted) {
      await sleep(this.#options.healthIntervalMs ?? 5000, done);
      if (done.aborted) break;
      const sent = Date.now();
      const error = await this.#probe(url, done);
      if (done.aborted) break;
      if (error === null) {
        since = null;
        continue;
      }
      since ??= sent;
      const ms = Date.now() - since;
      if (ms < limit) continue;
      const reason = `the ${this.spec.kind} engine for ${
        this.spec.model ?? "the default model"
      } (pid ${child.pid}, port ${this.spec.port}) was unhealthy for ${
        (ms / 1000).toFixed(1)
      } s (last probe: ${error}); restarting it`;
      this.#logger.warn(reason, { model: this.spec.model, port: this.spec.port, pid: child.pid });
      this.#setState("restarting", reason); // routed around while it drains
      await this.#terminate(child);
      return reason;
    }
    return null;
  }

  // Ready means our child answers: another process that took the port first (and would receive
  // the prompts routed to it) does not echo the child's token. Null when healthy, else why not.
  async #probe(url: string, cancel?: AbortSignal): Promise<string | null> {
    const timeout = AbortSignal.timeout(2000);
    try {
      const res = await fetch(url, {
        signal: cancel ? AbortSignal.any([timeout, cancel]) : timeout,
      });
      await res.body?.cancel();
      const ours = res.headers.get(ENGINE_INSTANCE_HEADER) === this.#instance;
      if (res.status === 200 && !ours && !this.#warnedForeign) {
        this.#warnedForeign = true;
        this.#logger.warn(
          `${url} answers, but not as the engine process this gateway started: another process ` +
            `holds port ${this.spec.port}; waiting for ours`,
          { model: this.spec.model, port: this.spec.port },
        );
      }
      if (res.status !== 200) return `answered HTTP ${res.status}`;
      return ours ? null : "answered without this engine's instance token";
    } catch (err) {
      if (timeout.aborted) return "no answer within 2000 ms";
      return `not reachable: ${errorMessage(err)}`;
    }
  }

  async #learnModels(): Promise<void> {
    try {
      const headers: Record<string, string> = {};
      if (this.spec.apiKey) headers.authorization = `Bearer ${this.spec.apiKey}`;
      const res = await fetch(`${this.baseUrl}/models`, {
        headers,
        signal: AbortSignal.timeout(5000),
      });
      const body = await res.json();
      const data = Array.isArray(body?.data) ? body.data : [];
      const ids = data.map((m: { id?: unknown }) => m.id).filter((id: unknown) =>
        typeof id === "string"
      );
      if (ids.length > 0) this.#models = ids;
      this.#randomWeights = data.some((m: { random_weights?: unknown }) => m.random_weights);
      this.#rerankers = data.filter((m: { id?: unknown; kind?: unknown }) =>
        m.kind === "rerank" && typeof m.id === "string"
      ).map((m: { id: string }) => m.id);
      const dtype = data.find((m: { dtype?: unknown }) => typeof m.dtype === "string")?.dtype;
      this.#dtype = dtype ?? null;
    } catch {
      // Keep what we knew: the requested model.
    }
    if (this.#models.length === 0 && this.spec.model !== undefined) {
      this.#models = [this.spec.model];
    }
  }

  #setState(state: SupervisorState, message?: string | null): void {
    if (message !== undefined) this.#message = message;
    if (state === this.#state) return;
    this.#state = state;
    this.#options.onStateChange?.(state, this);
  }
}

function signal(child: Deno.ChildProcess, sig: Deno.Signal): void {
  try {
    child.kill(sig);
  } catch {
    // Already exited.
  }
}

function describe(status: Deno.CommandStatus): string {
  return status.signal ? `signal ${status.signal}` : `exit code ${status.code}`;
}
