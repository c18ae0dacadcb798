/**
 * Network-region detection: is this host on a mainland-China network? If so, model downloads go
 * to a mirror of the hub. The answer is computed on first call and cached.
 *
 * Rule: `SVC_FORCE_CHINA_MIRROR=true` answers "china" at once. Otherwise two probes run at the same
 * time, each bounded by a short timeout (1.5 s): one to a host reachable from mainland China, one
 * to the international hub. The hub answering means "international"; else the China host
 * answering means "china"; when neither answers (offline, or `SVC_OFFLINE=true`, which skips the
 * probes) the locale decides: time zone Asia/Shanghai, Asia/Chongqing, Asia/Harbin or
 * Asia/Urumqi, or a zh_CN locale in LC_ALL/LC_MESSAGES/LANG, means "china".
 *
 * @module
 */

import { type EnvMap, loadConfig, readEnvVariable, setEnvVariable } from "./env.ts";

/** The hub mirror used on mainland-China networks. */
export const CHINA_HF_MIRROR_ENDPOINT = "https://hf-mirror.com";
/** The hub endpoint everywhere else. */
export const DEFAULT_HF_ENDPOINT = "https://huggingface.co";
/** Default timeout of each reachability probe, in milliseconds. */
export const DEFAULT_PROBE_TIMEOUT_MS = 1500;

/** Where this host's network is. */
export type NetworkRegion = "china" | "international";

/**
 * Resolves true when its target answered. It should stop when `signal` aborts; if it does not,
 * the detection still finishes at the timeout. A rejection counts as "did not answer".
 */
export type ReachabilityProbe = (signal: AbortSignal) => Promise<boolean>;

/** Options of the detection functions; every one is optional. */
export interface NetworkRegionOptions {
  /** Stands in for the process environment (read, and written by ensureHfMirrorConfigured). */
  env?: EnvMap;
  /** `.env` file passed to `loadConfig` (null: none). */
  envFile?: string | null;
  /** Probe of a host reachable from mainland China (default: https://www.baidu.com). */
  chinaProbe?: ReachabilityProbe;
  /** Probe of the international hub (default: https://huggingface.co). */
  internationalProbe?: ReachabilityProbe;
  /** Timeout of each probe in ms (default 1500); the probes run at the same time. */
  probeTimeoutMs?: number;
  /** IANA time zone for the fallback (default: the system's). */
  timeZone?: string;
  /** Locale for the fallback, e.g. "zh_CN.UTF-8" (default: LC_ALL, LC_MESSAGES or LANG). */
  locale?: string;
}

/** What {@link ensureHfMirrorConfigured} decided. */
export interface HfMirrorDecision {
  /** The hub endpoint downloads will use. */
  endpoint: string;
  /** `preset`: HUB_ENDPOINT was already set; `mirror`: set to the China mirror now; `default`. */
  source: "preset" | "mirror" | "default";
  /** True when HUB_ENDPOINT was set by this call. */
  changed: boolean;
  /** The detected region; absent when HUB_ENDPOINT was preset and no detection ran. */
  region?: NetworkRegion;
}

const CHINA_TIME_ZONES = new Set(["Asia/Shanghai", "Asia/Chongqing", "Asia/Harbin", "Asia/Urumqi"]);
const CHINA_PROBE_URL = "https://www.baidu.com";

let cached: Promise<NetworkRegion> | null = null;

function httpProbe(url: string): ReachabilityProbe {
  return async (signal) => {
    // Without net permission, fetch would prompt or fail: count the target as unreachable.
    const host = new URL(url).hostname;
    if (Deno.permissions.querySync({ name: "net", host }).state !== "granted") return false;
    const response = await fetch(url, { method: "HEAD", redirect: "manual", signal });
    await response.body?.cancel();
    return true;
  };
}

async function runProbe(probe: ReachabilityProbe, timeoutMs: number): Promise<boolean> {
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => {
      controller.abort(new DOMException("probe timed out", "TimeoutError"));
      resolve(false);
    }, timeoutMs);
  });
  const answered = Promise.resolve()
    .then(() => probe(controller.signal))
    .then((ok) => ok === true, () => false);
  try {
    return await Promise.race([answered, timedOut]);
  } finally {
    clearTimeout(timer);
  }
}

function safeEnv(name: string, env: EnvMap | undefined): string | undefined {
  try {
    return readEnvVariable(name, { env });
  } catch {
    return undefined; // no env permission: the fallback just has less to go on
  }
}

function localeSaysChina(options: NetworkRegionOptions): boolean {
  let timeZone = options.timeZone;
  if (timeZone === undefined) {
    try {
      timeZone = Intl.DateTimeFormat().resolvedOptions().timeZone;
    } catch {
      timeZone = "";
    }
  }
  if (CHINA_TIME_ZONES.has(timeZone)) return true;
  const locale = options.locale ?? safeEnv("LC_ALL", options.env) ??
    safeEnv("LC_MESSAGES", options.env) ?? safeEnv("LANG", options.env) ?? "";
  return /^zh[_-](CN|Hans-CN)\b/i.test(locale);
}

async function detect(options: NetworkRegionOptions): Promise<NetworkRegion> {
  const timeoutMs = options.probeTimeoutMs ?? DEFAULT_PROBE_TIMEOUT_MS;
  const [china, international] = await Promise.all([
    runProbe(options.chinaProbe ?? httpProbe(CHINA_PROBE_URL), timeoutMs),
    runProbe(options.internationalProbe ?? httpProbe(DEFAULT_HF_ENDPOINT), timeoutMs),
  ]);
  if (international) return "international";
  if (china) return "china";
  return localeSaysChina(options) ? "china" : "international";
}

/**
 * Returns "china" on mainland-China networks, else "international" (see the module doc for the
 * rule). The first call detects and caches; concurrent callers share the same detection. Takes
 * at most about `probeTimeoutMs` (1.5 s) without network.
 *
 * @example
 * ```ts
 * import { getNetworkRegion } from "@svc/cli";
 * console.log(await getNetworkRegion()); // "international" or "china"
 * ```
 */
export function getNetworkRegion(options: NetworkRegionOptions = {}): Promise<NetworkRegion> {
  const config = loadConfig({ env: options.env, envFile: options.envFile });
  if (config.forceChinaMirror) return Promise.resolve("china");
  if (config.offline) return Promise.resolve(localeSaysChina(options) ? "china" : "international");
  if (cached === null) {
    const detection = detect(options);
    cached = detection;
    // Never cache a failure: the next call tries again.
    detection.catch(() => {
      if (cached === detection) cached = null;
    });
  }
  return cached;
}

/**
 * True when {@link getNetworkRegion} says "china".
 *
 * @example
 * ```ts
 * import { detectChinaMainland } from "@svc/cli";
 * if (await detectChinaMainland()) console.log("using the hub mirror");
 * ```
 */
export async function detectChinaMainland(options: NetworkRegionOptions = {}): Promise<boolean> {
  return (await getNetworkRegion(options)) === "china";
}

/**
 * The hub endpoint to download from: HUB_ENDPOINT when set, else the China mirror on
 * mainland-China networks, else https://huggingface.co. No trailing slash.
 *
 * @example
 * ```ts
 * import { getHfEndpoint } from "@svc/cli";
 * console.log(await getHfEndpoint({ env: { HUB_ENDPOINT: "http://127.0.0.1:9000" } }));
 * ```
 */
export async function getHfEndpoint(options: NetworkRegionOptions = {}): Promise<string> {
  const config = loadConfig({ env: options.env, envFile: options.envFile });
  if (config.hubEndpoint !== undefined) return config.hubEndpoint;
  return (await getNetworkRegion(options)) === "china"
    ? CHINA_HF_MIRROR_ENDPOINT
    : DEFAULT_HF_ENDPOINT;
}

/**
 * On mainland-China networks, sets HUB_ENDPOINT (in the process environment, or in
 * `options.env` when given) to the mirror, unless HUB_ENDPOINT is already set (in the
 * environment or the `.env` file). Returns what it decided.
 *
 * @example
 * ```ts
 * import { ensureHfMirrorConfigured } from "@svc/cli";
 * const decision = await ensureHfMirrorConfigured();
 * console.log(decision.endpoint, decision.changed);
 * ```
 */
export async function ensureHfMirrorConfigured(
  options: NetworkRegionOptions = {},
): Promise<HfMirrorDecision> {
  const config = loadConfig({ env: options.env, envFile: options.envFile });
  if (config.hubEndpoint !== undefined) {
    return { endpoint: config.hubEndpoint, source: "preset", changed: false };
  }
  const region = await getNetworkRegion(options);
  if (region === "china") {
    setEnvVariable("HUB_ENDPOINT", CHINA_HF_MIRROR_ENDPOINT, { env: options.env });
    return { endpoint: CHINA_HF_MIRROR_ENDPOINT, source: "mirror", changed: true, region };
  }
  return { endpoint: DEFAULT_HF_ENDPOINT, source: "default", changed: false, region };
}

/**
 * Forgets the cached detection, so the next call probes again (tests, network changes).
 *
 * @example
 * ```ts
 * import { resetNetworkRegionCache } from "@svc/cli";
 * resetNetworkRegionCache();
 * ```
 */
export function resetNetworkRegionCache(): void {
  cached = null;
}
