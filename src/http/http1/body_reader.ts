/**
 * The request body of one HTTP/1.1 request as a pull-based `ReadableStream`, framed by
 * `Content-Length` or `Transfer-Encoding: chunked`. It sends `100 Continue` on the first read
 * when the client waits for it, errors with a 400 on bad framing and with a `CancelledError` when
 * the client leaves mid-body, and can be drained after the response so the connection is reused.
 *
 * @module
 */
import { CancelledError, SvcException } from "../../core/errors.ts";
import { badRequest } from "./protocol_error.ts";
import type { SocketReader } from "./socket_reader.ts";
import { BodyDecoder, type BodyErrors } from "./body_decoder.ts";

/** Options of {@link RequestBody}. */
export interface RequestBodyOptions {
  /** `Content-Length`, or null for a chunked body. */
  length: number | null;
  /** Largest chunk-size line and trailer section. */
  maxHeaderBytes: number;
  /** Sends `100 Continue`; given when the client waits for it before sending the body. */
  sendContinue?: () => Promise<void>;
  /** Called once when reading ends: without an error when the body was read to its end. */
  onEnd: (error?: SvcException) => void;
}

const REQUEST_BODY_ERRORS: BodyErrors = {
  malformed: (message, code, status) => badRequest(message, code, status),
  truncated: () =>
    new CancelledError("The client closed the connection before sending the whole body."),
};

/** The body of one request. */
export class RequestBody {
  /** What the handler reads (`Request.body`). */
  readonly stream: ReadableStream<Uint8Array>;
  readonly #options: RequestBodyOptions;
  readonly #decoder: BodyDecoder;
  #controller!: ReadableStreamDefaultController<Uint8Array>;
  #sendContinue: (() => Promise<void>) | undefined;
  #ended = false;
  #error: SvcException | undefined;
  #busy = false;

  constructor(reader: SocketReader, options: RequestBodyOptions) {
    this.#options = options;
    this.#decoder = new BodyDecoder(
      reader,
      options.length === null ? { kind: "chunked" } : { kind: "length", length: options.length },
      { maxHeaderBytes: options.maxHeaderBytes, errors: REQUEST_BODY_ERRORS },
    );
    this.#sendContinue = options.sendContinue;
    this.stream = new ReadableStream<Uint8Array>({
      start: (controller) => void (this.#controller = controller),
      pull: () => this.#pull(),
    }, { highWaterMark: 0 });
  }

  /** The body was read to its end (by the handler or a drain). */
  get complete(): boolean {
    return this.#ended && this.#error === undefined;
  }

  /** Reading failed (bad framing, timeout, client gone): the connection cannot be reused. */
  get failed(): boolean {
    return this.#error !== undefined;
  }

  /**
   * Whether the rest of the body can be drained after the response so the connection stays
   * open: a plain body with at most `maxBytes` left that did not fail.
   */
  drainable(maxBytes: number): boolean {
    if (this.complete) return true;
    return !this.failed && !this.awaitingContinue && this.#options.length !== null &&
      this.#decoder.remaining <= maxBytes;
  }

  /** The client waits for `100 Continue`, which was not sent: it may never send the body. */
  get awaitingContinue(): boolean {
    return this.#sendContinue !== undefined;
  }

  /** Ends the body with `err` (a timeout): the reader sees it, and so does `onEnd`. */
  fail(err: SvcException): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#error = err;
    try {
      this.#controller.error(err);
    } catch {
      // The handler cancelled the stream: nothing to tell it.
    }
    this.#options.onEnd(err);
  }

  /**
   * Reads and discards the rest of the body (up to `maxBytes`) after the response, so the
   * connection can carry the next request; false when that is not possible.
   */
  async drain(maxBytes: number): Promise<boolean> {
    if (this.#ended) return this.complete;
    if (this.#busy || this.awaitingContinue) return false;
    this.#busy = true;
    try {
      let total = 0;
      while (true) {
        const chunk = await this.#decoder.next();
        if (this.#ended) return false; // failed meanwhile (timeout)
        if (chunk === null) {
          this.#end();
          try {
            this.#controller.close();
          } catch {
            // Cancelled by the handler.
          }
          return true;
        }
        total += chunk.byteLength;
        if (total > maxBytes) return false;
      }
    } catch (err) {
      this.fail(asSvcError(err));
      return false;
    } finally {
      this.#busy = false;
    }
  }

  async #pull(): Promise<void> {
    if (this.#ended || this.#busy) return;
    this.#busy = true;
    try {
      const send = this.#sendContinue;
      if (send !== undefined) {
        this.#sendContinue = undefined;
        await send();
      }
      const chunk = await this.#decoder.next();
      if (this.#ended) return;
      if (chunk === null) {
        this.#end();
        this.#controller.close();
      } else {
        this.#controller.enqueue(chunk);
      }
    } catch (err) {
      this.fail(asSvcError(err));
    } finally {
      this.#busy = false;
    }
  }

  #end(): void {
    this.#ended = true;
    this.#options.onEnd();
  }
}

function asSvcError(err: unknown): SvcException {
  return err instanceof SvcException ? err : new CancelledError(undefined, { cause: err });
}
