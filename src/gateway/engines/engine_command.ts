/**
 * The command line of an engine the gateway starts: `deno run … cli.ts llm run …` with the
 * narrowest permissions that work, the key in the environment (never on the command line).
 *
 * @module
 */
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { localPath } from "../../core/module_location.ts";
import type { Dtype } from "../../engine/dtype.ts";
import { ADMISSION_LIMIT_FLAGS, type AdmissionLimits } from "../../engine/admission_limits.ts";
import { HTTP_LIMIT_FLAGS, type HttpLimits } from "../../http/http1/limits.ts";

/** What the supervised process serves and where. */
export interface EngineProcessSpec {
  /** Model to serve; left out: the default model of `kind` (or its demo stand-in). */
  model?: string;
  /** What it serves. */
  kind: "chat" | "embedding";
  /** Also serve a reranker on the same port: this model, or the default reranker. */
  rerank?: { model?: string };
  /** Listen address of the engine. */
  hostname: string;
  /** Listen port. */
  port: number;
  /** auto | webgpu | cpu | wasm. */
  device?: string;
  /** Let `device: webgpu` run on a software adapter (slow; for testing). */
  allowFallbackAdapter?: boolean;
  /** MiB of prefix cache of a chat engine (`--prefix-cache-mib`); its default when left out. */
  prefixCacheMib?: number;
  /** One of `DTYPES` (fp32, fp16, q8, …); left out, the engine picks the device's best. */
  dtype?: Dtype;
  /** Never download. */
  offline?: boolean;
  /** Key the engine requires (sent by the gateway); none when left out. */
  apiKey?: string;
  /** SVC_HOME of the child: its model cache lives under `<home>/hub`. */
  home: string;
  /** Hub endpoint (already resolved for the region), so the child does not probe the network. */
  hubEndpoint?: string;
  /** Per-request limits, passed as their `llm run` flags. */
  limits?: Partial<AdmissionLimits>;
  /** HTTP limits of the engine's server, passed as `svc llm run` flags. */
  httpLimits?: Partial<HttpLimits>;
}

/** A command line to run. */
export interface ProcessCommand {
  /** The program (the running `deno`). */
  command: string;
  /** Its arguments. */
  args: string[];
  /** Environment variables set for it. */
  env: Record<string, string>;
}

// Hosts a hub download may reach (the endpoint's host is added).
const HUB_FILE_HOSTS = ["cdn-lfs.huggingface.co", "cdn-lfs.hf.co", "cas-bridge.xethub.hf.co"];

/**
 * The default command: `deno run` of `cli.ts llm run` with the narrowest permissions that work:
 * net to the listen address (and the hub hosts unless the model is a demo model), read of the
 * engine's home and the project folder, write of the engine's home, env, ffi, sys.
 *
 * @example
 * ```ts
 * import { engineCommand } from "./engine_command.ts";
 * const cmd = engineCommand({ model: "demo/chat", kind: "chat", hostname: "127.0.0.1",
 *   port: 8001, home: "/tmp/svc" });
 * console.log(cmd.args.join(" "));
 * ```
 */
export function engineCommand(spec: EngineProcessSpec): ProcessCommand {
  const host = spec.hostname.includes(":") && !spec.hostname.startsWith("[")
    ? `[${spec.hostname}]`
    : spec.hostname;
  const net = [`${host}:${spec.port}`, `${connectHost(spec.hostname)}:${spec.port}`];
  const main = modelSource(spec.model);
  const reranker = spec.rerank ? modelSource(spec.rerank.model) : undefined;
  const localFolders = [main.folder, reranker?.folder].filter((f) => f !== undefined);
  if ((main.fromHub || reranker?.fromHub) && !spec.offline) {
    const endpoint = spec.hubEndpoint ?? "https://huggingface.co";
    try {
      net.push(new URL(endpoint).host);
    } catch {
      // A bad endpoint fails in the child with its own message.
    }
    net.push(...HUB_FILE_HOSTS);
  }
  // Found here, not at import: loaded from JSR or HTTP this module has no file path, and the
  // child then runs cli.ts from the same URL (importing only from that host, with our import map).
  const cliUrl = new URL("../../../cli.ts", import.meta.url);
  const cliPath = localPath(cliUrl);
  const projectRoot = cliPath === undefined ? undefined : dirname(cliPath);
  // The project (its sources and node_modules: Node-style package resolution walks up from the
  // importing file) and the engine's home; anything wider only when npm packages live in Deno's
  // global cache, whose paths are not ours to name.
  const read = projectRoot !== undefined && existsSync(join(projectRoot, "node_modules"))
    ? [projectRoot, spec.home, ...localFolders]
    : undefined;
  const config = projectRoot === undefined ? undefined : join(projectRoot, "deno.json");
  const args = [
    "run",
    "--no-prompt",
    ...(config !== undefined && existsSync(config) ? ["--config", config] : []),
    ...(cliPath === undefined ? remoteImportFlags(cliUrl) : []),
    `--allow-net=${[...new Set(net)].join(",")}`,
    read ? `--allow-read=${read.join(",")}` : "--allow-read",
    `--allow-write=${spec.home}`,
    "--allow-env",
    "--allow-ffi",
    "--allow-sys",
    cliPath ?? cliUrl.href,
    "llm",
    "run",
    "--kind",
    spec.kind,
    "--port",
    String(spec.port),
    "--host",
    spec.hostname,
    // The supervisor holds the child's stdin open: if it dies, even by SIGKILL, the engine stops.
    "--stop-with-stdin",
    // Browsers talk to the gateway, which has its own CORS setting; its engines answer no page.
    "--cors-origins",
    "none",
  ];
  if (spec.model !== undefined) args.push("--model", main.folder ?? spec.model);
  if (spec.rerank) args.push("--with-rerank");
  if (spec.rerank?.model !== undefined) {
    args.push("--rerank-model", reranker?.folder ?? spec.rerank.model);
  }
  if (spec.device !== undefined) args.push("--device", spec.device);
  if (spec.allowFallbackAdapter) args.push("--allow-fallback-adapter");
  if (spec.prefixCacheMib !== undefined) {
    args.push("--prefix-cache-mib", String(spec.prefixCacheMib));
  }
  if (spec.dtype !== undefined) args.push("--dtype", spec.dtype);
  if (spec.offline) args.push("--offline");
  for (const [key, value] of Object.entries(spec.limits ?? {})) {
    args.push(`--${ADMISSION_LIMIT_FLAGS[key as keyof AdmissionLimits]}`, String(value));
  }
  for (const [key, value] of Object.entries(spec.httpLimits ?? {})) {
    if (value !== undefined) {
      args.push(`--${HTTP_LIMIT_FLAGS[key as keyof HttpLimits]}`, String(value));
    }
  }
  const env: Record<string, string> = {
    SVC_HOME: spec.home,
    // Empty counts as unset: the child requires exactly the key we send, or none.
    ENGINE_API_KEY: spec.apiKey ?? "",
    SVC_CHAT_API_KEY: "",
  };
  if (spec.hubEndpoint !== undefined) env.HUB_ENDPOINT = spec.hubEndpoint;
  return { command: Deno.execPath(), args, env };
}

/**
 * Flags of a child that runs cli.ts from `cliUrl` (this package loaded from JSR or over HTTP):
 * import only from that host and, off JSR, resolve our sources' bare specifiers ("zod",
 * "@huggingface/transformers") with the package's own deno.json beside cli.ts as the import map
 * (Deno reads its `imports` and ignores the other keys). JSR rewrites them to `npm:` specifiers at
 * publish, so a JSR child needs no map.
 *
 * @example
 * ```ts
 * import { remoteImportFlags } from "./engine_command.ts";
 * remoteImportFlags(new URL("https://example.com/svc/cli.ts"));
 * // ["--allow-import=example.com", "--import-map=https://example.com/svc/deno.json"]
 * ```
 */
export function remoteImportFlags(cliUrl: URL): string[] {
  const flags = [`--allow-import=${cliUrl.host}`];
  if (cliUrl.hostname !== "jsr.io") flags.push(`--import-map=${new URL("deno.json", cliUrl).href}`);
  return flags;
}

/** Where a model comes from: a local folder (absolute), the hub, or neither (a demo model). */
function modelSource(model: string | undefined): { folder?: string; fromHub: boolean } {
  if (model?.startsWith("demo/")) return { fromHub: false };
  if (model !== undefined && existsSync(model)) return { folder: resolve(model), fromHub: false };
  return { fromHub: true };
}

/**
 * The address a client uses to reach a server bound to `host`.
 *
 * @example
 * ```ts
 * import { connectHost } from "./engine_command.ts";
 * connectHost("0.0.0.0"); // "127.0.0.1"
 * ```
 */
export function connectHost(host: string): string {
  const bare = host.replace(/^\[|\]$/g, "");
  if (bare === "0.0.0.0" || bare === "") return "127.0.0.1";
  if (bare === "::") return "::1";
  return bare;
}

/** `host` as written in a URL (IPv6 in brackets). */
export function urlHost(host: string): string {
  return host.includes(":") ? `[${host}]` : host;
}
