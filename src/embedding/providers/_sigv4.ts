/**
 * AWS Signature Version 4 for one request, with WebCrypto (no SDK). Enough for Bedrock:
 * canonical request (path segments encoded twice, as every service but S3 expects), string to
 * sign, the HMAC key chain, and the `Authorization` header.
 *
 * @module
 */

/** AWS credentials. */
export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  /** Temporary credentials' token (AWS_SESSION_TOKEN), sent as `x-amz-security-token`. */
  sessionToken?: string;
}

/** A request to sign. */
export interface SigV4Request {
  method: string;
  /** Full URL as it will be sent (path already percent-encoded once). */
  url: string;
  /** Headers to send and sign (besides host, x-amz-date and the session token). */
  headers: Record<string, string>;
  body: string;
  region: string;
  /** Signing name of the service, `bedrock` for Bedrock runtime. */
  service: string;
  credentials: AwsCredentials;
  /** Signing time (default now). */
  date?: Date;
}

const ENCODER = new TextEncoder();

/** RFC 3986 encoding as SigV4 wants it: everything but `A-Za-z0-9-_.~`, upper-case hex. */
export function uriEncode(text: string): string {
  let out = "";
  for (const byte of ENCODER.encode(text)) {
    const c = String.fromCharCode(byte);
    out += /[A-Za-z0-9\-_.~]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

/** Canonical URI of a (once-encoded) path: each segment encoded again; `/` when empty. */
export function canonicalPath(pathname: string): string {
  if (pathname === "" || pathname === "/") return "/";
  return pathname.split("/").map(uriEncode).join("/");
}

function canonicalQuery(search: string): string {
  const pairs = [...new URLSearchParams(search)].map(([k, v]) => [uriEncode(k), uriEncode(v)]);
  pairs.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : 1));
  return pairs.map(([k, v]) => `${k}=${v}`).join("&");
}

/** Hex of bytes. */
function hex(bytes: ArrayBuffer): string {
  return [...new Uint8Array(bytes)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** Hex SHA-256 of a UTF-8 string. */
export async function sha256Hex(text: string): Promise<string> {
  return hex(await crypto.subtle.digest("SHA-256", ENCODER.encode(text)));
}

async function hmac(key: ArrayBuffer | Uint8Array, text: string): Promise<ArrayBuffer> {
  const cryptoKey = await crypto.subtle.importKey(
    "raw",
    key as BufferSource,
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  return await crypto.subtle.sign("HMAC", cryptoKey, ENCODER.encode(text));
}

/** The SigV4 signing key for a day, region and service, as hex (for tests against AWS's). */
export async function signingKeyHex(
  secret: string,
  dateStamp: string,
  region: string,
  service: string,
): Promise<string> {
  return hex(await signingKey(secret, dateStamp, region, service));
}

async function signingKey(secret: string, day: string, region: string, service: string) {
  const kDate = await hmac(ENCODER.encode(`AWS4${secret}`), day);
  const kRegion = await hmac(kDate, region);
  const kService = await hmac(kRegion, service);
  return await hmac(kService, "aws4_request");
}

/** `20150830T123600Z` form of a date. */
export function amzDate(date: Date): string {
  return date.toISOString().replace(/[-:]/g, "").replace(/\.\d{3}/, "");
}

/**
 * Signs a request: returns the headers to send — the given ones plus `x-amz-date`,
 * `x-amz-security-token` (with a session token) and `authorization`.
 *
 * @example
 * ```ts
 * import { signAwsRequest } from "./_sigv4.ts";
 * const headers = await signAwsRequest({
 *   method: "POST",
 *   url: "https://bedrock-runtime.us-east-1.amazonaws.com/model/amazon.titan-embed-text-v2%3A0/invoke",
 *   headers: { "content-type": "application/json" },
 *   body: '{"inputText":"hi"}',
 *   region: "us-east-1",
 *   service: "bedrock",
 *   credentials: { accessKeyId: "AKID", secretAccessKey: "SECRET" },
 * });
 * console.log(headers.authorization); // AWS4-HMAC-SHA256 Credential=AKID/…
 * ```
 */
export async function signAwsRequest(request: SigV4Request): Promise<Record<string, string>> {
  const url = new URL(request.url);
  const stamp = amzDate(request.date ?? new Date());
  const day = stamp.slice(0, 8);
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) out[name.toLowerCase()] = value;
  out["x-amz-date"] = stamp;
  if (request.credentials.sessionToken) {
    out["x-amz-security-token"] = request.credentials.sessionToken;
  }
  const signed: Record<string, string> = { ...out, host: url.host };
  const names = Object.keys(signed).sort();
  const canonicalHeaders = names
    .map((n) => `${n}:${signed[n].trim().replace(/\s+/g, " ")}\n`)
    .join("");
  const signedHeaders = names.join(";");
  const canonicalRequest = [
    request.method.toUpperCase(),
    canonicalPath(url.pathname),
    canonicalQuery(url.search),
    canonicalHeaders,
    signedHeaders,
    await sha256Hex(request.body),
  ].join("\n");
  const scope = `${day}/${request.region}/${request.service}/aws4_request`;
  const stringToSign = ["AWS4-HMAC-SHA256", stamp, scope, await sha256Hex(canonicalRequest)]
    .join("\n");
  const key = await signingKey(
    request.credentials.secretAccessKey,
    day,
    request.region,
    request.service,
  );
  const signature = hex(await hmac(key, stringToSign));
  out.authorization = `AWS4-HMAC-SHA256 Credential=${request.credentials.accessKeyId}/${scope}, ` +
    `SignedHeaders=${signedHeaders}, Signature=${signature}`;
  return out;
}
