/**
 * A single-consumer async queue: the decode loop pushes events without waiting, the HTTP layer
 * pulls them. Ending iteration early (break, return) calls `onCancel`.
 *
 * @module
 */

/** An async iterable fed by push/end/fail. */
export class EventQueue<T> implements AsyncIterable<T> {
  #items: T[] = [];
  #done = false;
  #error: unknown = undefined;
  #failed = false;
  #notify: (() => void) | undefined;
  #onCancel: () => void;

  constructor(onCancel: () => void = () => {}) {
    this.#onCancel = onCancel;
  }

  push(item: T): void {
    if (this.#done) return;
    this.#items.push(item);
    this.#notify?.();
  }

  end(): void {
    this.#done = true;
    this.#notify?.();
  }

  fail(err: unknown): void {
    if (this.#done) return;
    this.#error = err;
    this.#failed = true;
    this.end();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    let finished = false;
    try {
      while (true) {
        if (this.#items.length > 0) {
          yield this.#items.shift()!;
          continue;
        }
        if (this.#done) {
          finished = true;
          if (this.#failed) throw this.#error;
          return;
        }
        await new Promise<void>((resolve) => (this.#notify = resolve));
        this.#notify = undefined;
      }
    } finally {
      if (!finished) this.#onCancel();
    }
  }
}
