/**
 * The response-head parser of the HTTP/1.1 client: the status line and headers, and how the body
 * that follows is framed (RFC 9112 §6.3). A malformed head is a {@link MalformedResponseError}.
 *
 * @module
 */
import type { BodyFraming } from "./body_decoder.ts";
import { headText } from "./request_head.ts";

/** A parsed response head. */
export interface ResponseHead {
  status: number;
  statusText: string;
  /** The header lines as (name, value) pairs, in order. */
  headers: [string, string][];
  /** The server keeps the connection open for another request. */
  keepAlive: boolean;
  /** `Content-Length`, or null. */
  contentLength: number | null;
  /** The value of `Transfer-Encoding`, or null. */
  transferEncoding: string | null;
}

/** The server's answer is not HTTP/1.1 we can read: the connection cannot be used further. */
export class MalformedResponseError extends Error {
  override name = "MalformedResponseError";
}

const STATUS_LINE = /^HTTP\/1\.(\d) (\d{3})(?: ([^\r\n]*))?$/;
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/**
 * Parses one response head (the bytes up to and including its blank line).
 *
 * @example
 * ```ts
 * import { parseResponseHead } from "./response_head.ts";
 * const head = parseResponseHead(
 *   new TextEncoder().encode("HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n"),
 * );
 * head.contentLength; // 2
 * ```
 */
export function parseResponseHead(bytes: Uint8Array): ResponseHead {
  const lines = headText(bytes).split("\n");
  const statusLine = stripCr(lines[0]);
  const match = STATUS_LINE.exec(statusLine);
  if (match === null) {
    throw new MalformedResponseError(
      `the status line '${statusLine.slice(0, 100)}' is not HTTP/1.x`,
    );
  }
  const [, minor, status, statusText = ""] = match;
  const headers: [string, string][] = [];
  let contentLength: string | undefined;
  let transferEncoding: string | undefined;
  let connection = "";
  // The last two lines are the blank line and what follows it (nothing).
  for (let i = 1; i < lines.length - 2; i++) {
    const line = stripCr(lines[i]);
    const colon = line.indexOf(":");
    const name = colon > 0 ? line.slice(0, colon) : "";
    if (!TOKEN.test(name)) {
      throw new MalformedResponseError(`the header line '${line.slice(0, 100)}' is malformed`);
    }
    const value = line.slice(colon + 1).trim();
    headers.push([name, value]);
    switch (name.toLowerCase()) {
      case "content-length":
        contentLength = contentLength === undefined ? value : `${contentLength}, ${value}`;
        break;
      case "transfer-encoding":
        transferEncoding = transferEncoding === undefined ? value : `${transferEncoding}, ${value}`;
        break;
      case "connection":
        connection += `${value.toLowerCase()},`;
        break;
    }
  }
  return {
    status: Number(status),
    statusText,
    headers,
    keepAlive: minor === "0" ? /\bkeep-alive\b/.test(connection) : !/\bclose\b/.test(connection),
    contentLength: contentLength === undefined ? null : byteCount(contentLength),
    transferEncoding: transferEncoding ?? null,
  };
}

/**
 * How the body after `head` ends, or null when it has none (a HEAD request, 1xx, 204, 304).
 *
 * @example
 * ```ts
 * import { parseResponseHead, responseFraming } from "./response_head.ts";
 * const head = parseResponseHead(new TextEncoder().encode("HTTP/1.1 204 No Content\r\n\r\n"));
 * responseFraming(head, "GET"); // null
 * ```
 */
export function responseFraming(head: ResponseHead, method: string): BodyFraming | null {
  if (method === "HEAD" || head.status < 200 || head.status === 204 || head.status === 304) {
    return null;
  }
  if (head.transferEncoding !== null) {
    // Chunked last: chunked. Any other coding: the body runs until the server closes.
    const last = head.transferEncoding.toLowerCase().split(",").at(-1)!.trim();
    return last === "chunked" ? { kind: "chunked" } : { kind: "close" };
  }
  if (head.contentLength !== null) return { kind: "length", length: head.contentLength };
  return { kind: "close" };
}

function byteCount(value: string): number {
  // Repeated identical values ("5, 5") are one length; anything else frames nothing.
  const values = value.split(",").map((v) => v.trim());
  if (!/^\d{1,15}$/.test(values[0]) || values.some((v) => v !== values[0])) {
    throw new MalformedResponseError(`Content-Length '${value.slice(0, 50)}' is not a byte count`);
  }
  return Number(values[0]);
}

function stripCr(line: string): string {
  return line.endsWith("\r") ? line.slice(0, -1) : line;
}
