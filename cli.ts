/**
 * The `svc` command line: `svc llm run | serve | stop | status | chat | model … | fine-tune`,
 * `svc ports`, `svc install`.
 *
 * @module
 */

import packageConfig from "./deno.json" with { type: "json" };
import { SvcException, ValidationError } from "./src/core/errors.ts";
import { ENV_VARIABLES } from "./src/config/env_vars.ts";
import { setupLogger } from "./src/core/logging.ts";
import { SvcPorts } from "./src/config/ports.ts";
import { closestMatch } from "./src/core/suggest.ts";

type Command = (args: string[]) => Promise<number>;

/**
 * Every command: its words, what it does (one line, for `svc --help`), and its entry, loaded when
 * the command runs (so `svc --help` and the light commands start without loading the engines).
 */
const COMMANDS: Record<string, { summary: string; run: Command }> = {
  "llm serve": {
    summary:
      `gateway on ${SvcPorts.GATEWAY_DEFAULT} + chat engine (+ --with-embedding: embeddings on ${SvcPorts.EMBEDDING_DEFAULT})`,
    run: (args) => import("./src/cli/llm_serve.ts").then((m) => m.llmServe(args)),
  },
  "llm gateway": {
    summary: "a gateway over running servers (--backend URL…), state shared by replicas",
    run: (args) => import("./src/cli/llm_gateway.ts").then((m) => m.llmGateway(args)),
  },
  "llm keys create": {
    summary: "make a gateway API key (shown once)",
    run: (args) => import("./src/cli/llm_keys.ts").then((m) => m.llmKeysCreate(args)),
  },
  "llm keys list": {
    summary: "list the gateway's API keys",
    run: (args) => import("./src/cli/llm_keys.ts").then((m) => m.llmKeysList(args)),
  },
  "llm keys revoke": {
    summary: "revoke a gateway API key",
    run: (args) => import("./src/cli/llm_keys.ts").then((m) => m.llmKeysRevoke(args)),
  },
  "llm status": {
    summary: "is 'svc llm serve' running, and what it serves",
    run: (args) => import("./src/cli/llm_status.ts").then((m) => m.llmStatus(args)),
  },
  "llm stop": {
    summary: "stop what 'svc llm serve' started (drains requests)",
    run: (args) => import("./src/cli/llm_stop.ts").then((m) => m.llmStop(args)),
  },
  "llm run": {
    summary:
      `serve one model (chat on port ${SvcPorts.LLM_DEFAULT}, embeddings on ${SvcPorts.EMBEDDING_DEFAULT})`,
    run: (args) => import("./src/cli/llm_run.ts").then((m) => m.llmRun(args)),
  },
  "llm chat": {
    summary: "chat with a running server: one shot (--prompt) or interactive",
    run: (args) => import("./src/cli/llm_chat.ts").then((m) => m.llmChat(args)),
  },
  "llm model download": {
    summary: "download a hub model (or generate a demo model) and register it",
    run: (args) => import("./src/cli/llm_model_download.ts").then((m) => m.llmModelDownload(args)),
  },
  "llm model list": {
    summary: "list the registered models",
    run: (args) => import("./src/cli/llm_model_list.ts").then((m) => m.llmModelList(args)),
  },
  "llm model show": {
    summary: "show one model: entry, files, size",
    run: (args) => import("./src/cli/llm_model_show.ts").then((m) => m.llmModelShow(args)),
  },
  "llm model delete": {
    summary: "delete a model's files and its entry",
    run: (args) => import("./src/cli/llm_model_delete.ts").then((m) => m.llmModelDelete(args)),
  },
  "llm fine-tune": {
    summary: "validate a chat dataset, then fine-tune on an OpenAI-compatible API",
    run: (args) => import("./src/cli/llm_fine_tune.ts").then((m) => m.llmFineTune(args)),
  },
  "ports": {
    summary: "which Svc ports are free or in use, and by what",
    run: (args) => import("./src/cli/ports.ts").then((m) => m.portsCommand(args)),
  },
  "install": {
    summary: "install an 'svc' command that needs no 'deno' on PATH",
    run: (args) => import("./src/cli/install.ts").then((m) => m.install(args)),
  },
};

function help(prefix = ""): string {
  const names = Object.keys(COMMANDS).filter((n) => prefix === "" || n.startsWith(`${prefix} `));
  const width = Math.max(...names.map((n) => n.length));
  const rows = names.map((n) => `  svc ${n.padEnd(width)}  ${COMMANDS[n].summary}`);
  return `svc — local OpenAI-compatible inference: gateway, engines, embeddings

Usage: svc ${prefix ? `${prefix} ` : ""}<command> [options]     (svc <command> --help for details)${
    prefix ? "" : "\n       svc --version"
  }

${rows.join("\n")}

Global options (before or after the command):
  --log-level <level>   debug | info | warn | error | silent [env: SVC_LOG_LEVEL] (default info)
  -v, --verbose         the same as --log-level debug
${prefix ? "" : `\n${environmentHelp()}`}`.trimEnd();
}

// The ENVIRONMENT section: every variable Svc reads, with its default (a flag given wins).
function environmentHelp(): string {
  const width = Math.max(...ENV_VARIABLES.map((v) => v.name.length));
  const rows = ENV_VARIABLES.map((v) =>
    `  ${v.name.padEnd(width)}  ${v.description}${
      v.defaultText !== "" && !v.description.includes("default")
        ? ` (default ${v.defaultText})`
        : ""
    }`
  );
  return `Environment (also read from ./.env; a flag given on the command line wins):\n${
    rows.join("\n")
  }`;
}

const LOG_LEVELS = ["debug", "info", "warn", "error", "silent"] as const;

/**
 * Takes the global `--log-level <level>` (or `--log-level=<level>`) and `-v` / `--verbose`
 * (= debug) out of `args` (never after `--`); throws a ValidationError naming a bad level.
 */
function takeLogFlags(args: string[]): { args: string[]; level?: string } {
  const rest: string[] = [];
  let level: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === "--") {
      rest.push(...args.slice(i));
      break;
    }
    if (a === "-v" || a === "--verbose") level = "debug";
    else if (a === "--log-level" || a.startsWith("--log-level=")) {
      const value = a === "--log-level" ? args[++i] : a.slice("--log-level=".length);
      if (value === undefined || !(LOG_LEVELS as readonly string[]).includes(value)) {
        throw new ValidationError(
          `--log-level is ${value === undefined ? "missing its value" : `'${value}'`}: expected ` +
            `one of ${LOG_LEVELS.join(", ")} (or -v for debug)`,
          { param: "log-level" },
        );
      }
      level = value;
    } else rest.push(a);
  }
  return { args: rest, level };
}

// The known command closest to `words`: the longest group they start with, then the word after
// it corrected ("llm serv" → "llm serve", "lm status" → "llm status").
function suggestCommand(words: string[]): string | undefined {
  const names = Object.keys(COMMANDS);
  // "serve" → "llm serve": a command's words without its group.
  const grouped =
    names.find((n) => n.startsWith("llm ") && n.slice(4) === words.slice(0, 2).join(" ")) ??
      names.find((n) => n.startsWith("llm ") && n.slice(4) === words[0]);
  if (words.length > 0 && grouped !== undefined) return grouped;
  for (let depth = Math.min(words.length - 1, 2); depth >= 0; depth--) {
    const group = words.slice(0, depth).join(" ");
    const next = names.map((n) => n.split(" "))
      .filter((n) => n.length > depth && n.slice(0, depth).join(" ") === group)
      .map((n) => n[depth]);
    const word = closestMatch(words[depth], next);
    if (word === undefined || word === words[depth]) continue;
    const fixed = [...words.slice(0, depth), word];
    const whole = [...fixed, ...words.slice(depth + 1)];
    // "llm modle list" → "llm model list"; else the corrected words alone.
    return [3, 2].map((n) => whole.slice(0, n).join(" ")).find((n) => n in COMMANDS) ??
      fixed.join(" ");
  }
  return undefined;
}

function logLevel(flag?: string): string {
  if (flag !== undefined) {
    // The engines `serve` starts, and its own configuration, follow the flag too.
    try {
      if (Deno.permissions.querySync({ name: "env" }).state === "granted") {
        Deno.env.set("SVC_LOG_LEVEL", flag);
      }
    } catch {
      // No env permission: this process alone logs at the level.
    }
    return flag;
  }
  // Reading the variable must not fail (or prompt) when --allow-env was not given.
  try {
    const granted =
      Deno.permissions.querySync({ name: "env", variable: "SVC_LOG_LEVEL" }).state === "granted";
    return (granted ? Deno.env.get("SVC_LOG_LEVEL") : undefined) || "info";
  } catch {
    return "info";
  }
}

// The errors of the file system that name a path ("Not a directory (os error 20): mkdir '/x/y'").
const FILE_SYSTEM_ERRORS = [
  Deno.errors.NotADirectory,
  Deno.errors.NotFound,
  Deno.errors.AlreadyExists,
  Deno.errors.IsADirectory,
  Deno.errors.PermissionDenied,
  Deno.errors.FilesystemLoop,
];

/**
 * One line for an error of the file system (the OS refused, not a missing Deno flag): the folder
 * it concerns — SVC_HOME or `--root` when the path lies in one — and what to do; undefined for
 * other errors.
 */
function fileSystemError(err: unknown, args: string[]): string | undefined {
  const named = err instanceof Error && /\(os error \d+\): \w+ '/.test(err.message);
  if (!named && !FILE_SYSTEM_ERRORS.some((c) => err instanceof c)) return undefined;
  const m = /^(.*?)(?: \(os error \d+\))?(?:: (\w+) '(.*)')?$/s.exec((err as Error).message);
  const [, reason, op, path] = m ?? ["", (err as Error).message];
  const rootAt = args.findIndex((a) => a === "--root" || a.startsWith("--root="));
  const root = rootAt < 0
    ? undefined
    : args[rootAt] === "--root"
    ? args[rootAt + 1]
    : args[rootAt].slice("--root=".length);
  const home = svcHome();
  const folders: [string | undefined, string, string][] = [
    [root, `--root ${root}`, "pass --root with a folder you can write"],
    [home, `SVC_HOME ${home}`, "set SVC_HOME to a folder you can write"],
  ];
  const what = reason.toLowerCase() + (path === undefined ? "" : ` (${op} ${path})`);
  for (const [folder, named, fix] of folders) {
    if (folder === undefined || folder === "") continue;
    const base = folder.replace(/\/+$/, "");
    // Without a path in the message (Deno leaves it out where reading it is not allowed), the
    // folder is blamed when it is no folder.
    const concerned = path === undefined
      ? !isFolder(base)
      : path === base || path.startsWith(`${base}/`);
    if (concerned) return `${named} is not a writable folder: ${what}; ${fix}`;
  }
  return `the file system refused: ${what}; check ${
    path === undefined ? (home ? `SVC_HOME (${home})` : "the paths given") : "that path"
  } (a folder that exists and that you can write)`;
}

function isFolder(path: string): boolean {
  try {
    return Deno.statSync(path).isDirectory;
  } catch {
    return false;
  }
}

function svcHome(): string | undefined {
  try {
    return Deno.permissions.querySync({ name: "env", variable: "SVC_HOME" }).state === "granted"
      ? Deno.env.get("SVC_HOME")
      : undefined;
  } catch {
    return undefined;
  }
}

/** The package's version, from its deno.json (a JSON import: it loads from a URL as well). */
export const VERSION: string = packageConfig.version;

/**
 * Runs the CLI with `args` and returns the process exit code. Errors are printed as one line
 * naming what was wrong and what to do; the exit code comes from the error class.
 *
 * @example
 * ```ts
 * import { main } from "@svc/cli/cli";
 * const code = await main(["--help"]); // 0
 * ```
 */
export async function main(argv: string[]): Promise<number> {
  let args: string[];
  let levelFlag: string | undefined;
  try {
    ({ args, level: levelFlag } = takeLogFlags(argv));
  } catch (err) {
    console.error(`svc: ${(err as Error).message}`);
    return 64;
  }
  const isHelp = (a: string | undefined) => a === "--help" || a === "-h" || a === "help";
  // `svc help llm serve` is `svc llm serve --help`.
  if (args[0] === "help" && args.length > 1) args = [...args.slice(1), "--help"];
  if (args.length === 0 || isHelp(args[0])) {
    console.log(help());
    return 0;
  }
  if (args[0] === "--version" || args[0] === "-V") {
    console.log(`svc ${VERSION}`);
    return 0;
  }
  // The longest run of leading words that names a command ("llm model list" before "llm").
  const name = [3, 2, 1].map((n) => args.slice(0, n).join(" ")).find((n) => n in COMMANDS);
  if (!name) {
    const words = args.filter((a) => !a.startsWith("-")).slice(0, 2);
    const group = [2, 1].map((n) => words.slice(0, n).join(" ")).find((g) =>
      g !== "" && Object.keys(COMMANDS).some((c) => c.startsWith(`${g} `))
    );
    if (group && (args.length === group.split(" ").length || args.some(isHelp))) {
      console.log(help(group));
      return args.some(isHelp) ? 0 : 64;
    }
    const near = suggestCommand(args.filter((a) => !a.startsWith("-")));
    console.error(
      `svc: unknown command '${args.slice(0, 3).join(" ")}'.` +
        (near ? ` Did you mean 'svc ${near}'?` : "") + " Run 'svc --help' for the list.",
    );
    return 64;
  }
  try {
    setupLogger(logLevel(levelFlag));
    return await COMMANDS[name].run(args.slice(name.split(" ").length));
  } catch (err) {
    if (err instanceof SvcException) {
      console.error(`svc: ${err.message}`);
      return err.exitCode;
    }
    if (err instanceof Deno.errors.NotCapable) {
      console.error(`svc: missing permission: ${err.message}`);
      return 77;
    }
    // Whoever read our output went away (`svc … | head`): stop quietly with the status of a
    // tool that SIGPIPE ended (Deno ignores the signal, so the write fails instead).
    if (err instanceof Deno.errors.BrokenPipe) return 141;
    const fsLine = fileSystemError(err, args);
    if (fsLine !== undefined) {
      console.error(`svc: ${fsLine}`);
      return err instanceof Deno.errors.PermissionDenied ? 77 : 73;
    }
    console.error(
      `svc: unexpected error: ${err instanceof Error ? err.stack ?? err.message : err}`,
    );
    return 70;
  }
}

if (import.meta.main) {
  Deno.exit(await main(Deno.args));
}
