/**
 * The scheduler's queue of waiting sequences (decode_scheduler.ts), fair between requests: the
 * first sequence of every request comes before the second of any (round-robin by request), and
 * one request may hold at most three quarters of the batch.
 *
 * @module
 */

import type { ScheduledSequence } from "./scheduler_types.ts";

/** Whether a waiting sequence may start now; `hold` counts one more started. */
export interface Shares {
  fits(seq: ScheduledSequence): boolean;
  hold(seq: ScheduledSequence): void;
}

/** Waiting sequences, ordered round-robin over their requests. */
export class RequestQueue {
  /** Ordered by (place within its request, request arrival): round-robin over requests. */
  #waiting: ScheduledSequence[] = [];
  /** Each queued or running sequence's request and its place in that request. */
  #requestOf = new WeakMap<ScheduledSequence, { request: number; place: number }>();
  #requests = 0;

  /** The waiting sequences, first to start first. */
  get waiting(): readonly ScheduledSequence[] {
    return this.#waiting;
  }

  /** Queues the sequences of one request. */
  add(seqs: readonly ScheduledSequence[]): void {
    const request = ++this.#requests;
    let at = 0;
    seqs.forEach((seq, place) => {
      this.#requestOf.set(seq, { request, place });
      // After every sequence of an earlier or equal place (the new request arrived last).
      while (at < this.#waiting.length && this.#placeOf(this.#waiting[at]) <= place) at++;
      this.#waiting.splice(at++, 0, seq);
    });
  }

  /** Keeps waiting only the sequences `keep` is true for, in their order. */
  filter(keep: (seq: ScheduledSequence) => boolean): void {
    this.#waiting = this.#waiting.filter(keep);
  }

  /** A sequence's place within its request (0 for the first). */
  #placeOf(seq: ScheduledSequence): number {
    return this.#requestOf.get(seq)?.place ?? 0;
  }

  /**
   * Whether a waiting sequence may start now: its request holds less than its share of a batch of
   * `most` (three quarters of it, so other requests always find room). None is held yet.
   */
  shares(most: number): Shares {
    const share = most - Math.floor(most / 4);
    const held = new Map<number, number>();
    const requestOf = (seq: ScheduledSequence) => this.#requestOf.get(seq)?.request ?? 0;
    const hold = (seq: ScheduledSequence) => {
      held.set(requestOf(seq), (held.get(requestOf(seq)) ?? 0) + 1);
    };
    return { fits: (seq) => (held.get(requestOf(seq)) ?? 0) < share, hold };
  }
}
