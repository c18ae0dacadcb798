/**
 * The request-head parser: finds where a head ends in the bytes read so far, and parses the
 * request line and headers into what the connection needs (method, URL parts, body framing,
 * keep-alive, `Expect: 100-continue`). Anything malformed is a 400 (or 501/505) error.
 *
 * @module
 */
import { badRequest } from "./protocol_error.ts";

/** A parsed request head. */
export interface RequestHead {
  method: string;
  /** The request target as sent (`/v1/models`, or an absolute URL). */
  target: string;
  /** 0 for HTTP/1.0, 1 for HTTP/1.1 (and later 1.x). */
  minor: number;
  /** The header lines as (name, value) pairs, in order. */
  headers: [string, string][];
  /** The Host header, or null. */
  host: string | null;
  /** Declared body length, or null (no `Content-Length`). */
  contentLength: number | null;
  /** `Transfer-Encoding: chunked`. */
  chunked: boolean;
  /** The client allows another request on this connection. */
  keepAlive: boolean;
  /** `Expect: 100-continue` (HTTP/1.1 only). */
  expectContinue: boolean;
}

const LF = 10;
const CR = 13;
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
// The target: no whitespace and no control characters.
// deno-lint-ignore no-control-regex
const REQUEST_LINE = /^([!#$%&'*+\-.^_`|~0-9A-Za-z]+) ([^\s\x00-\x1f\x7f]+) HTTP\/(\d)\.(\d)$/;
// Control characters other than HTAB.
// deno-lint-ignore no-control-regex
const CTL = /[\x00-\x08\x0a-\x1f\x7f]/;
const ASCII = new TextDecoder();
const FRAMING = new Set(["content-length", "transfer-encoding", "connection", "expect", "host"]);

/**
 * Index just past the blank line that ends a head in `buf[from, to)`, or -1 when it has not
 * arrived yet. Lines may end in CRLF or a bare LF.
 *
 * @example
 * ```ts
 * import { findHeadEnd } from "./request_head.ts";
 * const bytes = new TextEncoder().encode("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
 * findHeadEnd(bytes, 0, bytes.length); // bytes.length
 * ```
 */
export function findHeadEnd(buf: Uint8Array, from: number, to: number): number {
  let i = buf.indexOf(LF, from);
  while (i !== -1 && i < to) {
    // A line feed followed by an empty line: LF LF or LF CR LF.
    if (i + 1 < to && buf[i + 1] === LF) return i + 2;
    if (i + 2 < to && buf[i + 1] === CR && buf[i + 2] === LF) return i + 3;
    i = buf.indexOf(LF, i + 1);
  }
  return -1;
}

/**
 * Parses one request head (the bytes up to and including its blank line).
 *
 * @example
 * ```ts
 * import { parseRequestHead } from "./request_head.ts";
 * const head = parseRequestHead(new TextEncoder().encode("GET /x HTTP/1.1\r\nHost: a\r\n\r\n"));
 * head.target; // "/x"
 * ```
 */
export function parseRequestHead(bytes: Uint8Array): RequestHead {
  const lines = headText(bytes).split("\n");
  const requestLine = stripCr(lines[0]);
  const match = REQUEST_LINE.exec(requestLine);
  if (match === null) {
    if (/^PRI \* HTTP\/2\.0$/.test(requestLine)) throw versionNotSupported("2.0");
    throw badRequest(
      `The request line '${requestLine.slice(0, 100)}' is malformed; expected ` +
        "'METHOD /path HTTP/1.1'.",
      "invalid_request_line",
    );
  }
  const [, method, target, major, minor] = match;
  if (major !== "1") throw versionNotSupported(`${major}.${minor}`);
  // Pairs, not a Headers: the Request built from them makes the one Headers object.
  const headers: [string, string][] = [];
  // The headers that frame the request, by lower-case name (repeats joined as Headers joins them).
  const framing: Record<string, string> = {};
  // The last two lines are the blank line and what follows it (nothing).
  for (let i = 1; i < lines.length - 2; i++) {
    const line = stripCr(lines[i]);
    const colon = line.indexOf(":");
    const name = colon > 0 ? line.slice(0, colon) : "";
    if (!TOKEN.test(name)) {
      throw badRequest(
        `The header line '${line.slice(0, 100)}' is malformed; expected 'Name: value'.`,
        "invalid_header",
      );
    }
    const value = line.slice(colon + 1).trim();
    // RFC 9110 5.5: no control characters but HTAB (a bare CR, a NUL) in a field value.
    if (CTL.test(value)) {
      throw badRequest(
        `The value of header '${name}' has a control character.`,
        "invalid_header",
      );
    }
    headers.push([name, value]);
    const key = name.toLowerCase();
    if (FRAMING.has(key)) framing[key] = key in framing ? `${framing[key]}, ${value}` : value;
  }
  const version = Number(minor) === 0 ? 0 : 1;
  const te = framing["transfer-encoding"];
  const cl = framing["content-length"];
  if (te !== undefined && cl !== undefined) {
    throw badRequest(
      "The request has both Transfer-Encoding and Content-Length; send one of them.",
      "conflicting_framing",
    );
  }
  const host = framing.host ?? null;
  if (version === 1 && host === null) {
    throw badRequest("An HTTP/1.1 request needs a Host header.", "missing_host");
  }
  const connection = (framing.connection ?? "").toLowerCase();
  return {
    method,
    target,
    minor: version,
    headers,
    host,
    contentLength: cl === undefined ? null : contentLength(cl),
    chunked: te === undefined ? false : isChunked(te),
    keepAlive: version === 1 ? !/\bclose\b/.test(connection) : /\bkeep-alive\b/.test(connection),
    expectContinue: version === 1 && (framing.expect ?? "").toLowerCase() === "100-continue",
  };
}

/**
 * The URL of a request: the target on the Host header's authority (an absolute target as is).
 * Throws a 400 when the result is not a URL.
 *
 * @example
 * ```ts
 * import { requestUrl } from "./request_head.ts";
 * requestUrl("/v1/models", "localhost:8000", "127.0.0.1:8000"); // "http://localhost:8000/v1/models"
 * ```
 */
export function requestUrl(target: string, host: string | null, fallbackHost: string): string {
  let url: string;
  if (target.startsWith("/")) url = `http://${host || fallbackHost}${target}`;
  else if (/^https?:\/\//i.test(target)) url = target;
  else if (target === "*") url = `http://${host || fallbackHost}/`;
  else {
    throw badRequest(
      `The request target '${target.slice(0, 100)}' is not a path; expected '/...'.`,
      "invalid_request_target",
    );
  }
  if (!URL.canParse(url)) {
    throw badRequest(
      `The request target '${target.slice(0, 100)}' with Host '${
        (host ?? "").slice(0, 100)
      }' is not a valid URL.`,
      "invalid_request_target",
    );
  }
  return url;
}

function contentLength(value: string): number {
  // Repeated identical values ("5, 5") are allowed; anything else is not a length.
  const values = value.split(",").map((v) => v.trim());
  const n = values[0];
  if (!/^\d{1,15}$/.test(n) || values.some((v) => v !== n)) {
    throw badRequest(
      `Content-Length '${value.slice(0, 50)}' is not a byte count.`,
      "invalid_content_length",
    );
  }
  return Number(n);
}

function isChunked(value: string): boolean {
  const codings = value.toLowerCase().split(",").map((v) => v.trim());
  if (codings.at(-1) !== "chunked") {
    throw badRequest(
      `Transfer-Encoding '${value.slice(0, 50)}' does not end in chunked, so the body has no end.`,
      "invalid_transfer_encoding",
    );
  }
  if (codings.length > 1) {
    throw badRequest(
      `Transfer-Encoding '${value.slice(0, 50)}' is not supported; send the body plain or chunked.`,
      "unsupported_transfer_encoding",
      501,
    );
  }
  return true;
}

function versionNotSupported(version: string) {
  return badRequest(
    `HTTP/${version} is not supported on this port; speak HTTP/1.1 (no HTTP/2 prior knowledge).`,
    "http_version_not_supported",
    505,
  );
}

function stripCr(line: string): string {
  return line.endsWith("\r") ? line.slice(0, -1) : line;
}

/**
 * A head's bytes as a string of the same char codes (a ByteString, as fetch's Headers wants).
 *
 * @example
 * ```ts
 * import { headText } from "./request_head.ts";
 * headText(new Uint8Array([0x48, 0x80])); // "H\x80"
 * ```
 */
export function headText(bytes: Uint8Array): string {
  // ASCII (nearly every head) reads the same in UTF-8, whose decoder is the fastest. The WHATWG
  // "latin1" decoder is windows-1252 and remaps 0x80-0x9f, so other heads are copied code by code.
  let ascii = true;
  for (let i = 0; i < bytes.length; i++) {
    if (bytes[i] > 0x7f) {
      ascii = false;
      break;
    }
  }
  if (ascii) return ASCII.decode(bytes);
  let out = "";
  for (let i = 0; i < bytes.length; i += 4096) {
    out += String.fromCharCode(...bytes.subarray(i, i + 4096));
  }
  return out;
}
