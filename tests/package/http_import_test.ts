// Importing the package over HTTP, as a consumer's program does with a URL import: every export
// entry of deno.json must load in a fresh Deno process, with nothing resolved from disk at import.
//
// An HTTP import carries no import map: the bare specifiers in our sources ("zod",
// "@huggingface/transformers") resolve through the *consumer's* import map. So the consumer here
// declares the same npm mappings as our deno.json, which is what a real HTTP consumer must do.
// (JSR consumers need nothing: `deno publish` rewrites bare specifiers to `npm:` ones.)
import { join } from "node:path";
import { assert, assertEquals } from "../_assert.ts";
import { ROOT } from "../cli/_run_cli.ts";
import { serveFolder } from "../_helpers/static_server.ts";
import { CHILD_HOME } from "../gateway/_child_home.ts";

const CONFIG = JSON.parse(await Deno.readTextFile(join(ROOT, "deno.json")));
const ENTRIES: Record<string, string> = CONFIG.exports;

/**
 * Runs `main` in a fresh consumer project that maps our npm packages: a script's text (as its
 * main.ts), or a module's URL run directly with `args`. Returns its standard output.
 */
async function runConsumer(
  baseUrl: string,
  main: string | URL,
  args: string[] = [],
  options: { permissions?: string[]; env?: (consumer: string) => Record<string, string> } = {},
) {
  const consumer = await Deno.makeTempDir({ prefix: "svc_http_consumer_" });
  try {
    await Deno.writeTextFile(
      join(consumer, "deno.json"),
      JSON.stringify({ imports: CONFIG.imports }),
    );
    if (typeof main === "string") await Deno.writeTextFile(join(consumer, "main.ts"), main);
    const output = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--quiet",
        "--no-lock",
        "--config=deno.json", // found by itself only for a local main module
        `--reload=${baseUrl}`, // never a cached copy of an earlier run on the same port
        `--allow-import=${new URL(baseUrl).host}`,
        "--allow-read",
        "--allow-env",
        "--allow-ffi",
        "--allow-sys",
        ...(options.permissions ?? []),
        typeof main === "string" ? "main.ts" : main.href,
        ...args,
      ],
      cwd: consumer,
      env: options.env?.(consumer),
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stdout = new TextDecoder().decode(output.stdout);
    const stderr = new TextDecoder().decode(output.stderr);
    assertEquals(output.code, 0, `the consumer failed:\n${stderr}`);
    return stdout;
  } finally {
    await Deno.remove(consumer, { recursive: true });
  }
}

Deno.test("every export entry loads from an http:// URL in a fresh Deno process", async () => {
  await using server = serveFolder(ROOT);
  // Prints one line per entry: its name and how many names it exports.
  const urls = Object.entries(ENTRIES).map(([name, path]) => [name, server.baseUrl + path]);
  const stdout = await runConsumer(
    server.baseUrl,
    `for (const [name, url] of ${JSON.stringify(urls)}) {
      console.log(name, Object.keys(await import(url)).length);
    }`,
  );
  const counts = Object.fromEntries(stdout.trim().split("\n").map((l) => l.split(" ")));
  assertEquals(Object.keys(counts), Object.keys(ENTRIES), stdout);
  for (const [name, count] of Object.entries(counts)) {
    if (!(Number(count) > 0)) throw new Error(`entry ${name} exports nothing over HTTP`);
  }
  // The files came from the server, not from disk.
  if (!server.served.includes("/src/gateway/engines/engine_command.ts")) {
    throw new Error(`the server never served engine_command.ts: ${server.served.length} files`);
  }
});

Deno.test("an engine command built by a module loaded over HTTP runs cli.ts from that URL", async () => {
  await using server = serveFolder(ROOT);
  const stdout = await runConsumer(
    server.baseUrl,
    `import { engineCommand } from "${server.baseUrl}src/gateway/engines/engine_command.ts";
    const cmd = engineCommand({ kind: "chat", model: "demo/chat", hostname: "127.0.0.1", port: 8001, home: "/tmp/svc" });
    console.log(JSON.stringify(cmd.args));`,
  );
  const args: string[] = JSON.parse(stdout);
  assert(args.includes(`${server.baseUrl}cli.ts`), `no cli.ts URL in ${stdout}`);
  assert(args.includes(`--allow-import=${new URL(server.baseUrl).host}`), stdout);
  assert(args.includes(`--import-map=${server.baseUrl}deno.json`), stdout);
  assert(!args.some((a) => a.startsWith("--config")), `a local --config in ${stdout}`);
});

Deno.test("a gateway loaded over HTTP starts an engine that answers", async () => {
  await using server = serveFolder(ROOT);
  // The engine child runs cli.ts from the server with our deno.json as its import map: without
  // it, no bare specifier of our sources resolves there (the consumer's map is not the child's).
  const stdout = await runConsumer(
    server.baseUrl,
    `import { createGateway } from "${server.baseUrl}gateway.ts";
    const gateway = await createGateway({
      management: {
        home: ${JSON.stringify(CHILD_HOME)}, // demo models already generated there
        portCandidates: () => [],
        device: "cpu",
        offline: true,
      },
      engines: [{ model: "demo/embed" }],
    });
    try {
      const [engine] = gateway.manager!.list();
      await gateway.manager!.whenReady(engine.id, { timeoutMs: 60_000 });
      const res = await gateway.handler(new Request("http://gateway/v1/embeddings", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "demo/embed", input: "hello" }),
      }));
      const body = await res.json();
      console.log(JSON.stringify({ status: res.status, length: body.data?.[0]?.embedding?.length, body }));
    } finally {
      await gateway.close();
    }`,
    [],
    {
      permissions: ["--allow-run", "--allow-net=127.0.0.1", "--allow-write"],
      env: (consumer) => ({ SVC_HOME: join(consumer, "svc_home") }),
    },
  );
  const answer = JSON.parse(stdout.trim().split("\n").at(-1)!);
  assertEquals(answer.status, 200, stdout);
  assert(answer.length > 0, stdout);
});

Deno.test("mod.ts run as the main module from an http:// URL is the svc CLI", async () => {
  await using server = serveFolder(ROOT);
  // `deno run jsr:@svc/cli …` does the same from JSR: mod.ts loads cli.ts from its own URL.
  const stdout = await runConsumer(server.baseUrl, new URL("mod.ts", server.baseUrl), [
    "--version",
  ]);
  assertEquals(stdout.trim(), `svc ${CONFIG.version}`);
});
