/**
 * A unit of upstream work as the dispatcher queues it: one client request, or several embedding
 * requests merged into one.
 *
 * @module
 */
import type { BackendKind } from "./backend_config.ts";

/** One client request inside a job (several when embeddings are merged). */
export interface Member {
  body: Record<string, unknown>;
  inputs?: (string | number[])[];
  resolve: (res: Response) => void;
  reject: (err: unknown) => void;
  settled: boolean;
  aborted: boolean;
  job: Job;
  detach: () => void;
}

/** A unit of upstream work, as queued in a pool. */
export class Job {
  readonly exclude = new Set<string>();
  readonly members: Member[] = [];
  readonly controller = new AbortController();
  /** Set once a stream was handed to the client: the job lasts until that stream ends. */
  streaming = false;
  constructor(
    readonly seq: number,
    readonly priority: number,
    readonly deadline: number,
    readonly model: string,
    readonly kind: BackendKind,
    readonly path: string,
    readonly stream: boolean,
    readonly timeoutAt: number,
    readonly userKey: string | undefined,
    readonly batchKey: string | undefined,
    readonly requestId: string | undefined,
    /** The `Via` chain to send upstream (via.ts). */
    readonly via: string,
    readonly prefixKey?: string,
  ) {}
  get batchSize(): number {
    return this.members.reduce((n, m) => n + (m.inputs?.length ?? 1), 0);
  }
  /** A copy with no members that will not be merged (to resend a member on its own). */
  solo(): Job {
    return new Job(
      this.seq,
      this.priority,
      this.deadline,
      this.model,
      this.kind,
      this.path,
      this.stream,
      this.timeoutAt,
      this.userKey,
      undefined,
      this.requestId,
      this.via,
      this.prefixKey,
    );
  }
  /** Members still waiting for an answer. */
  open(): Member[] {
    return this.members.filter((m) => !m.settled);
  }
}
