// Pieces shared by the client's factories: endpoints, URL checks, the HTTP policy, and finding
// a gateway to send management calls to.
import { SvcPorts } from "../config/ports.ts";
import { ConfigurationError, ValidationError } from "../core/errors.ts";
import type { HttpPolicy } from "./_http.ts";
import type { EngineKind } from "../core/model_kind.ts";
import {
  type DetectionOptions,
  probeService,
  recordedGatewayUrl,
  trimBase,
} from "./detect_endpoints.ts";
import type { EndpointInfo, EndpointSource, UnifiedClientConfig } from "./types.ts";

/** What to do when a kind has no endpoint. */
export const NO_ENDPOINT: Record<EngineKind, string> = {
  chat: "no chat endpoint was found: start a gateway (`svc llm serve`, port 8000) or an engine " +
    "(`svc llm run`, port 8001), or set SVC_CHAT_BASE_URL, or COMPAT_BASE_URL and " +
    "COMPAT_API_KEY for an OpenAI-compatible cloud API",
  embedding: "no embedding endpoint was found: start `svc llm serve --with-embedding` (port " +
    "8090) or a gateway, or set SVC_EMBEDDING_BASE_URL, or COMPAT_BASE_URL and COMPAT_API_KEY",
};

/** One endpoint of a client, key included. */
export interface Endpoint {
  baseUrl: string | null;
  model: string | null;
  source: EndpointSource;
  apiKey: string | null;
}

/**
 * The first gateway that answers: the one a running `svc llm serve` recorded (as detection finds
 * it), then the detection hosts at the gateway port.
 */
export async function findGateway(
  options: DetectionOptions,
  key: string | null,
): Promise<string> {
  const port = options.gatewayPort ?? SvcPorts.GATEWAY_DEFAULT;
  const recorded = await recordedGatewayUrl(options);
  const bases = [
    ...(recorded === null ? [] : [recorded]),
    ...(options.hosts ?? ["127.0.0.1"]).map((host) => `http://${host}:${port}/v1`),
  ].filter((base, i, all) => all.indexOf(base) === i);
  const tried: string[] = [];
  for (const base of bases) {
    const seen = await probeService(base, key, options);
    if (seen.answered) return base;
    tried.push(`${base} (${seen.detail})`);
  }
  throw new ConfigurationError(
    `no gateway answers at ${tried.join(", ")}: start one with \`svc llm serve\` or pass ` +
      "controlPlaneUrl",
    { param: "controlPlaneUrl", code: "no_gateway" },
  );
}

/** An endpoint record. */
export function endpoint(
  baseUrl: string,
  model: string | null | undefined,
  source: EndpointSource,
  apiKey: string | null,
): Endpoint {
  return { baseUrl, model: model ?? null, source, apiKey };
}

/** The endpoint without its key. */
export function info(e: Endpoint): EndpointInfo {
  return { baseUrl: e.baseUrl, model: e.model, source: e.source, hasKey: Boolean(e.apiKey) };
}

/** Checks an http(s) base URL and trims it (a bare origin gets /v1). */
export function checkUrl(url: string | undefined, param: string): string {
  let parsed: URL | undefined;
  try {
    parsed = new URL(String(url));
  } catch {
    // reported below
  }
  if (parsed === undefined || (parsed.protocol !== "http:" && parsed.protocol !== "https:")) {
    throw new ConfigurationError(
      `${param} must be an http(s) base URL ending in /v1, e.g. http://127.0.0.1:8000/v1; ` +
        `got ${JSON.stringify(url)}`,
      { param },
    );
  }
  return trimBase(String(url));
}

/** Longest delay a timer takes (setTimeout fires at once beyond it). */
export const MAX_TIMER_MS = 2_147_483_647;

/** What {@link checkNumber} accepts. */
interface NumberRule {
  /** Smallest value allowed. */
  min: number;
  /** True when `min` itself is not allowed. */
  aboveMin?: boolean;
  max?: number;
  integer?: boolean;
}

/**
 * Throws unless `value` (when given) is a number within `rule`: a ConfigurationError for a
 * client setting, a ValidationError for an option of one call.
 */
export function checkNumber(
  value: unknown,
  param: string,
  rule: NumberRule,
  kind: "setting" | "call" = "setting",
): void {
  if (value === undefined) return;
  const n = value as number;
  const ok = typeof value === "number" && Number.isFinite(n) &&
    (rule.aboveMin ? n > rule.min : n >= rule.min) && (rule.max === undefined || n <= rule.max) &&
    (!rule.integer || Number.isInteger(n));
  if (ok) return;
  const what = rule.integer ? "an integer" : "a number";
  const range = (rule.aboveMin ? `above ${rule.min}` : `of at least ${rule.min}`) +
    (rule.max === undefined ? "" : ` and at most ${rule.max}`);
  const message = `${param} must be ${what} ${range}; got ${
    typeof value === "number" ? String(value) : JSON.stringify(value) ?? String(value)
  }`;
  throw kind === "setting"
    ? new ConfigurationError(message, { param })
    : new ValidationError(message, { param });
}

/** A time limit in ms: above 0, at most what a timer takes. */
export const TIMEOUT_RULE: NumberRule = { min: 0, aboveMin: true, max: MAX_TIMER_MS };

/** Checks the numeric settings of a client's configuration (before anything starts). */
export function checkConfig(
  config: UnifiedClientConfig & { probeTimeoutMs?: number },
): void {
  checkNumber(config.timeoutMs, "timeoutMs", TIMEOUT_RULE);
  checkNumber(config.streamIdleTimeoutMs, "streamIdleTimeoutMs", TIMEOUT_RULE);
  checkNumber(config.probeTimeoutMs, "probeTimeoutMs", TIMEOUT_RULE);
  checkNumber(config.maxRetries, "maxRetries", { min: 0, integer: true });
  checkNumber(config.retryBaseDelayMs, "retryBaseDelayMs", { min: 0, max: MAX_TIMER_MS });
  checkNumber(config.maxRetryDelayMs, "maxRetryDelayMs", { min: 0, max: MAX_TIMER_MS });
  checkNumber(config.embedBatchSize, "embedBatchSize", { min: 1, integer: true });
  checkSampling({ ...config.defaultSampling }, "defaultSampling.", "setting");
}

/** Sampling numbers must be finite (JSON would send NaN and Infinity as null). */
export function checkSampling(
  options: object,
  prefix: string,
  kind: "setting" | "call",
): void {
  for (const name of SAMPLING_NUMBERS) {
    const value = (options as Record<string, unknown>)[name];
    if (value === undefined) continue;
    if (typeof value !== "number" || !Number.isFinite(value)) {
      const message = `${prefix}${name} must be a finite number; got ${String(value)}`;
      const param = `${prefix}${name}`;
      throw kind === "setting"
        ? new ConfigurationError(message, { param })
        : new ValidationError(message, { param });
    }
  }
}

const SAMPLING_NUMBERS = [
  "temperature",
  "topP",
  "topK",
  "maxTokens",
  "seed",
  "presencePenalty",
  "frequencyPenalty",
  "repetitionPenalty",
  "n",
  "maxOutputTokens",
] as const;

/** Timeouts and retries with their defaults. */
export function httpPolicy(config: UnifiedClientConfig): HttpPolicy {
  checkConfig(config);
  return {
    timeoutMs: config.timeoutMs ?? 120_000,
    streamIdleTimeoutMs: config.streamIdleTimeoutMs,
    maxRetries: config.maxRetries ?? 3,
    retryBaseDelayMs: config.retryBaseDelayMs ?? 250,
    maxRetryDelayMs: config.maxRetryDelayMs ?? 10_000,
    onRetry: config.onRetry,
  };
}
