/**
 * `svc ports`: every SvcPorts port with whether it is free or in use, and by what when known:
 * the state file of a running `svc llm serve`, else (Linux, when /proc may be read) the owning process.
 *
 * @module
 */

import { loadConfig } from "../config/env.ts";
import { SvcPorts } from "../config/ports.ts";
import { formatTable } from "./_format.ts";
import { parseCommandArgs } from "./args.ts";
import {
  defaultServeStatePath,
  isProcessAlive,
  readServeState,
  type ServeState,
} from "./serve_state.ts";

/** Help text of `svc ports`. */
export const PORTS_HELP = `svc ports — which Svc ports are free or in use, and by what

Usage: svc ports [--host <addr>] [--json]

  --host <addr>          interface to check (default 0.0.0.0: every IPv4 interface)
  --json                 print the result as JSON

A port in use is described from the state file of a running 'svc llm serve'
(<SVC_HOME>/engines/serve.env) when it lists the port; otherwise, on Linux when /proc may be
read (Deno grants that only with --allow-all), by the process that listens there.
Permissions: --allow-net=0.0.0.0,127.0.0.1 (or --host and 127.0.0.1) --allow-read=<SVC_HOME>
--allow-env (--allow-run to check that the serve process still runs).`;

/** One checked port. */
export interface PortStatus {
  port: number;
  /** SvcPorts constant names with this number (and configured variables). */
  names: string[];
  free: boolean;
  /** What uses it, when known. */
  usedBy: string | null;
}

/** Runs `svc ports`; returns the exit code. */
export async function portsCommand(args: string[]): Promise<number> {
  const { values } = parseCommandArgs(args, "svc ports", {
    host: { type: "string" },
    json: { type: "boolean" },
  });
  if (values.help) {
    console.log(PORTS_HELP);
    return 0;
  }
  const host = (values.host as string | undefined) ?? "0.0.0.0";
  const config = loadConfig();
  const ports = portTable(config.llmPort, config.embeddingPort);
  const serve = await servePorts(await readServeState(defaultServeStatePath()).catch(() => null));
  let owners: Map<number, string> | null = null;
  const statuses: PortStatus[] = [];
  for (const [port, names] of ports) {
    const free = await SvcPorts.isAvailable(port, host);
    let usedBy: string | null = null;
    if (!free) {
      usedBy = serve.get(port) ?? null;
      if (usedBy === null) {
        owners ??= await listeningProcesses();
        usedBy = owners.get(port) ?? null;
      }
    }
    statuses.push({ port, names, free, usedBy });
  }
  if (values.json) {
    console.log(JSON.stringify(statuses, null, 2));
    return 0;
  }
  const rows = statuses.map((s) => [
    String(s.port),
    s.names.join(", "),
    s.free ? "free" : "in use",
    s.free ? "" : s.usedBy ?? "",
  ]);
  console.log(formatTable(["PORT", "NAME", "STATE", "USED BY"], rows, { alignRight: [0] }));
  return 0;
}

/** Port number → names, in SvcPorts order, plus configured ports that are none of them. */
export function portTable(llmPort: number, embeddingPort: number): Map<number, string[]> {
  const constants: [string, number][] = [
    ["GATEWAY_DEFAULT", SvcPorts.GATEWAY_DEFAULT],
    ["LLM_DEFAULT", SvcPorts.LLM_DEFAULT],
    ["LLM_WSL_FALLBACK", SvcPorts.LLM_WSL_FALLBACK],
    ["BENCHMARK_LLM", SvcPorts.BENCHMARK_LLM],
    ["STUDIO_BACKEND", SvcPorts.STUDIO_BACKEND],
    ["STUDIO_FRONTEND", SvcPorts.STUDIO_FRONTEND],
    ["EMBEDDING_DEFAULT", SvcPorts.EMBEDDING_DEFAULT],
  ];
  const table = new Map<number, string[]>();
  for (const [name, port] of constants) {
    const names = table.get(port);
    if (names) names.push(name);
    else table.set(port, [name]);
  }
  // Configured ports appear only when they are not one of the constants already.
  for (const [name, port] of [["SVC_LLM_PORT", llmPort], ["SVC_EMBEDDING_PORT", embeddingPort]]) {
    if (!table.has(port as number)) table.set(port as number, [name as string]);
  }
  return table;
}

/**
 * Port → description from the state of `svc llm serve` (its `serve.env`): the gateway and engine
 * ports it records, when it says a serve process runs (its pid is set; with `--allow-run` the
 * pid is also checked to be alive). Empty otherwise.
 */
export async function servePorts(state: ServeState | null): Promise<Map<number, string>> {
  const found = new Map<number, string>();
  if (state === null || state.pid === undefined) return found;
  const canCheck = (await Deno.permissions.query({ name: "run" })).state === "granted";
  if (canCheck && !isProcessAlive(state.pid)) return found;
  const add = (port: number | undefined, what: string, pid: number | undefined) => {
    if (port !== undefined && Number.isInteger(port) && !found.has(port)) {
      found.set(port, `svc llm serve: ${what} (pid ${pid ?? state.pid})`);
    }
  };
  add(state.gatewayPort, "gateway", state.pid);
  add(state.llmPort, `chat engine${state.chatModel ? ` ${state.chatModel}` : ""}`, state.llmPid);
  add(
    state.embeddingPort,
    `embedding engine${state.embeddingModel ? ` ${state.embeddingModel}` : ""}`,
    state.embeddingPid,
  );
  return found;
}

/**
 * Listening TCP ports → `process name (pid N)`, from /proc/net/tcp{,6} and the socket links in
 * /proc/<pid>/fd. Only on Linux and only when /proc may be read without prompting; otherwise
 * (or for other users' processes) the map is simply missing those ports.
 */
export async function listeningProcesses(): Promise<Map<number, string>> {
  const owners = new Map<number, string>();
  if (Deno.build.os !== "linux") return owners;
  const readable = async (path: string) =>
    (await Deno.permissions.query({ name: "read", path })).state === "granted";
  if (!(await readable("/proc/net/tcp")) || !(await readable("/proc"))) return owners;
  const inodes = new Map<string, number>();
  for (const file of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let text: string;
    try {
      text = await Deno.readTextFile(file);
    } catch {
      continue;
    }
    for (const line of text.split("\n").slice(1)) {
      const cols = line.trim().split(/\s+/);
      // local_address is HEX_IP:HEX_PORT; state 0A is LISTEN; column 9 is the socket inode.
      if (cols.length < 10 || cols[3] !== "0A") continue;
      const port = parseInt(cols[1].split(":")[1], 16);
      if (cols[9] !== "0") inodes.set(cols[9], port);
    }
  }
  if (inodes.size === 0) return owners;
  try {
    for await (const proc of Deno.readDir("/proc")) {
      if (!/^\d+$/.test(proc.name)) continue;
      let fds: AsyncIterable<Deno.DirEntry>;
      try {
        fds = Deno.readDir(`/proc/${proc.name}/fd`);
        for await (const fd of fds) {
          const link = await Deno.readLink(`/proc/${proc.name}/fd/${fd.name}`).catch(() => "");
          const inode = /^socket:\[(\d+)\]$/.exec(link)?.[1];
          const port = inode === undefined ? undefined : inodes.get(inode);
          if (port === undefined || owners.has(port)) continue;
          const comm = (await Deno.readTextFile(`/proc/${proc.name}/comm`).catch(() => "?"))
            .trim();
          owners.set(port, `${comm} (pid ${proc.name})`);
        }
      } catch {
        // another user's process, or it just exited
      }
    }
  } catch {
    // /proc not listable
  }
  return owners;
}
