/**
 * Configuration of one backend instance of the gateway (an engine the gateway sends requests to):
 * where it is, what it serves, its key, and how much work it takes. {@link validateBackendConfig}
 * checks a config and fills defaults; errors name the field at fault.
 *
 * The key is held in a {@link SecretValue}: it never shows up in `JSON.stringify`, `console.log`
 * or string conversion, and it is registered with the logger so its value is redacted anywhere.
 *
 * @module
 */
import { ValidationError } from "../core/errors.ts";
import { registerSecret } from "../core/logging.ts";
import { isLoopbackUrl } from "../core/loopback.ts";
import type { BackendKind } from "../core/model_kind.ts";

/** What an instance serves: chat/text generation (`llm`) or vectors (`embedding`). */
export type { BackendKind };

/** A backend instance as written in configuration (camelCase; only `id`, `baseUrl`, `kind`, `models` are required). */
export interface BackendInstanceConfig {
  /** Unique name of the instance (letters, digits, `.`, `_`, `:`, `-`; 1-64 characters). */
  id: string;
  /** OpenAI-compatible base URL ending in `/v1`, e.g. `http://127.0.0.1:8001/v1`. */
  baseUrl: string;
  /** What it serves. */
  kind: BackendKind;
  /** Model ids the instance serves, as the instance names them. */
  models: string[];
  /** Other names clients may use: alias → one of `models` (sent upstream as that model). */
  aliases?: Record<string, string>;
  /** Key sent as `Authorization: Bearer <apiKey>`; never logged or serialized. */
  apiKey?: string | null;
  /** Share of traffic under weighted round-robin (default 1). */
  weight?: number;
  /** Most requests sent to it at once (default 8); more wait in the gateway's queue. */
  maxConcurrency?: number;
  /** Price per 1k tokens, any currency (default 0); used by `cost_optimized`. */
  cost?: number;
  /** Runs on this machine or network (default: true when the host is loopback). */
  local?: boolean;
  /** Per-attempt timeout in ms: until the answer (or a stream's first byte, then between bytes). Default 120000. */
  timeoutMs?: number;
  /** Extra headers sent with every request (not `Authorization`: use `apiKey`). */
  headers?: Record<string, string>;
  /**
   * The server software, where its API differs from OpenAI's and vLLM's: `"llama.cpp"` takes
   * `/tokenize` and `/detokenize` in its own shape. Default `"openai"` (Svc, vLLM, and others).
   */
  server?: BackendServer;
}

/** Server software whose API the gateway maps to (backend_api.ts). */
export type BackendServer = "openai" | "llama.cpp";

/**
 * A secret string that hides itself: `JSON.stringify`, `String()` and `Deno.inspect` show
 * `[REDACTED]`; only {@link SecretValue.reveal} gives the value.
 *
 * @example
 * ```ts
 * import { validateBackendConfig } from "@svc/cli/gateway";
 * const { apiKey } = validateBackendConfig({
 *   id: "a", baseUrl: "https://api.example.com/v1", kind: "llm", models: ["m"], apiKey: "sk-123",
 * });
 * JSON.stringify({ apiKey }); // '{"apiKey":"[REDACTED]"}'
 * apiKey?.reveal(); // "sk-123"
 * ```
 */
export class SecretValue {
  #value: string;
  /** Wraps `value` and registers it for redaction in logs. */
  constructor(value: string) {
    this.#value = value;
    registerSecret(value);
  }
  /** The secret itself: use it only to build the outgoing request. */
  reveal(): string {
    return this.#value;
  }
  /** `[REDACTED]`, so JSON never holds the secret. */
  toJSON(): string {
    return "[REDACTED]";
  }
  /** `[REDACTED]`. */
  toString(): string {
    return "[REDACTED]";
  }
  /** `[REDACTED]` in Deno's inspect. */
  [Symbol.for("Deno.customInspect")](): string {
    return "[REDACTED]";
  }
  /** `[REDACTED]` in Node's inspect. */
  [Symbol.for("nodejs.util.inspect.custom")](): string {
    return "[REDACTED]";
  }
}

/** A validated config with every default filled in. */
export interface ResolvedBackendConfig {
  /** Unique name of the instance. */
  readonly id: string;
  /** Without a trailing slash, always ending in `/v1`. */
  readonly baseUrl: string;
  /** What it serves. */
  readonly kind: BackendKind;
  /** Model ids it serves. */
  readonly models: readonly string[];
  /** Extra model names routed to it, alias to upstream name. */
  readonly aliases: Readonly<Record<string, string>>;
  /** Key sent upstream; null for none. */
  readonly apiKey: SecretValue | null;
  /** Routing weight. */
  readonly weight: number;
  /** Requests it takes at once. */
  readonly maxConcurrency: number;
  /** Cost per 1k tokens. */
  readonly cost: number;
  /** Whether it runs on this machine. */
  readonly local: boolean;
  /** Per-request timeout in ms. */
  readonly timeoutMs: number;
  /** Extra headers sent upstream. */
  readonly headers: Readonly<Record<string, string>>;
  /** The server software, for the endpoints whose shape differs. */
  readonly server: BackendServer;
}

/** Defaults of the optional fields. */
export const BACKEND_DEFAULTS = {
  weight: 1,
  maxConcurrency: 8,
  cost: 0,
  timeoutMs: 120_000,
} as const;

const FIELDS = new Set([
  "id",
  "baseUrl",
  "kind",
  "models",
  "aliases",
  "apiKey",
  "weight",
  "maxConcurrency",
  "cost",
  "local",
  "timeoutMs",
  "headers",
  "server",
]);
const ID_RE = /^[A-Za-z0-9._:-]{1,64}$/;
const HEADER_NAME_RE = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
// Headers the gateway sets itself: a configured value would break framing or leak a second key.
const RESERVED_HEADERS = new Set([
  "authorization",
  "content-length",
  "content-type",
  "host",
  "connection",
  "transfer-encoding",
]);

/**
 * Checks a backend config (from a file, the management API or code) and fills in defaults.
 * Throws a {@link ValidationError} whose `param` names the field at fault.
 *
 * @example
 * ```ts
 * import { validateBackendConfig } from "@svc/cli/gateway";
 * const cfg = validateBackendConfig({
 *   id: "local-chat",
 *   baseUrl: "http://127.0.0.1:8001/v1",
 *   kind: "llm",
 *   models: ["demo/chat"],
 * });
 * cfg.local; // true
 * cfg.maxConcurrency; // 8
 * ```
 */
export function validateBackendConfig(input: unknown): ResolvedBackendConfig {
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    throw new ValidationError("a backend config must be an object with id, baseUrl, kind, models", {
      param: "backend",
    });
  }
  const raw = input as Record<string, unknown>;
  for (const key of Object.keys(raw)) {
    if (!FIELDS.has(key)) {
      throw new ValidationError(
        `unknown backend config field '${key}'; known fields: ${[...FIELDS].join(", ")}`,
        { param: key },
      );
    }
  }
  const id = raw.id;
  if (typeof id !== "string" || !ID_RE.test(id)) {
    throw new ValidationError(
      "backend 'id' must be 1-64 characters of letters, digits, '.', '_', ':' or '-'",
      { param: "id" },
    );
  }
  const at = `backend '${id}'`;
  const baseUrl = checkBaseUrl(raw.baseUrl, at);
  const kind = raw.kind;
  if (kind !== "llm" && kind !== "embedding") {
    throw new ValidationError(`${at}: 'kind' must be "llm" or "embedding"`, { param: "kind" });
  }
  const models = raw.models;
  if (
    !Array.isArray(models) || models.length === 0 ||
    !models.every((m) => typeof m === "string" && m.length > 0 && m.length <= 256)
  ) {
    throw new ValidationError(`${at}: 'models' must be a non-empty list of model ids`, {
      param: "models",
    });
  }
  const aliases = checkStringRecord(raw.aliases, "aliases", at);
  for (const [alias, target] of Object.entries(aliases)) {
    if (!models.includes(target)) {
      throw new ValidationError(
        `${at}: alias '${alias}' points to '${target}', which is not in 'models'`,
        { param: "aliases" },
      );
    }
  }
  const apiKey = raw.apiKey;
  if (apiKey !== undefined && apiKey !== null && (typeof apiKey !== "string" || apiKey === "")) {
    throw new ValidationError(`${at}: 'apiKey' must be a non-empty string or null`, {
      param: "apiKey",
    });
  }
  const headers = checkStringRecord(raw.headers, "headers", at);
  for (const [name, value] of Object.entries(headers)) {
    if (!HEADER_NAME_RE.test(name) || /[\r\n\0]/.test(value)) {
      throw new ValidationError(`${at}: header '${name}' is not a valid HTTP header`, {
        param: "headers",
      });
    }
    if (RESERVED_HEADERS.has(name.toLowerCase())) {
      throw new ValidationError(
        `${at}: header '${name}' is set by the gateway; put a key in 'apiKey' instead`,
        { param: "headers" },
      );
    }
  }
  const server = raw.server ?? "openai";
  if (server !== "openai" && server !== "llama.cpp") {
    throw new ValidationError(`${at}: 'server' must be "openai" or "llama.cpp"`, {
      param: "server",
    });
  }
  if (raw.local !== undefined && typeof raw.local !== "boolean") {
    throw new ValidationError(`${at}: 'local' must be true or false`, { param: "local" });
  }
  return Object.freeze({
    id,
    baseUrl,
    kind,
    models: Object.freeze([...models]),
    aliases: Object.freeze(aliases),
    apiKey: typeof apiKey === "string" ? new SecretValue(apiKey) : null,
    weight: checkNumber(raw.weight, "weight", at, { min: 0, exclusiveMin: true, max: 1000 }) ??
      BACKEND_DEFAULTS.weight,
    maxConcurrency: checkNumber(raw.maxConcurrency, "maxConcurrency", at, {
      min: 1,
      max: 100_000,
      integer: true,
    }) ?? BACKEND_DEFAULTS.maxConcurrency,
    cost: checkNumber(raw.cost, "cost", at, { min: 0, max: 1e9 }) ?? BACKEND_DEFAULTS.cost,
    local: (raw.local as boolean | undefined) ?? isLoopbackUrl(baseUrl),
    timeoutMs: checkNumber(raw.timeoutMs, "timeoutMs", at, {
      min: 1,
      max: 86_400_000,
      integer: true,
    }) ?? BACKEND_DEFAULTS.timeoutMs,
    headers: Object.freeze(headers),
    server,
  });
}

function checkBaseUrl(value: unknown, at: string): string {
  const hint = "an http(s) URL ending in /v1, e.g. http://127.0.0.1:8001/v1";
  if (typeof value !== "string") {
    throw new ValidationError(`${at}: 'baseUrl' must be ${hint}`, { param: "baseUrl" });
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ValidationError(
      `${at}: 'baseUrl' '${value.slice(0, 200)}' is not a URL; use ${hint}`,
      {
        param: "baseUrl",
      },
    );
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new ValidationError(`${at}: 'baseUrl' must use http or https; use ${hint}`, {
      param: "baseUrl",
    });
  }
  if (url.username !== "" || url.password !== "" || url.search !== "" || url.hash !== "") {
    throw new ValidationError(
      `${at}: 'baseUrl' must not carry credentials, a query or a fragment (put keys in 'apiKey')`,
      { param: "baseUrl" },
    );
  }
  const path = url.pathname.replace(/\/+$/, "");
  if (!path.endsWith("/v1")) {
    throw new ValidationError(
      `${at}: 'baseUrl' must end in /v1 (got '${url.pathname}'); use ${hint}`,
      {
        param: "baseUrl",
      },
    );
  }
  return `${url.origin}${path}`;
}

function checkStringRecord(value: unknown, field: string, at: string): Record<string, string> {
  if (value === undefined || value === null) return {};
  if (typeof value !== "object" || Array.isArray(value)) {
    throw new ValidationError(`${at}: '${field}' must be an object of strings`, { param: field });
  }
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    if (typeof v !== "string" || k === "") {
      throw new ValidationError(`${at}: '${field}.${k}' must be a string`, { param: field });
    }
    out[k] = v;
  }
  return out;
}

function checkNumber(
  value: unknown,
  field: string,
  at: string,
  rule: { min: number; max: number; exclusiveMin?: boolean; integer?: boolean },
): number | undefined {
  if (value === undefined) return undefined;
  const ok = typeof value === "number" && Number.isFinite(value) &&
    (rule.exclusiveMin ? value > rule.min : value >= rule.min) && value <= rule.max &&
    (!rule.integer || Number.isInteger(value));
  if (!ok) {
    const range = `${rule.exclusiveMin ? "above" : "at least"} ${rule.min} and at most ${rule.max}`;
    throw new ValidationError(
      `${at}: '${field}' must be ${rule.integer ? "an integer" : "a number"} ${range}`,
      { param: field },
    );
  }
  return value as number;
}
