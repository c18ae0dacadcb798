// `svc llm run --model demo/chat` run as a remote module, the way a JSR user runs the package
// (`deno run -A jsr:@svc/cli llm run …`): only the files `deno publish` would upload, served over
// HTTP from loopback; a scratch working folder with no node_modules of ours; no network beyond
// loopback (a proxy that answers nothing takes every other request), so npm packages come from
// the Deno cache and the demo model, tokenizer included, from the package's own modules.
//
// JSR rewrites our bare specifiers ("zod", "@huggingface/transformers") to `npm:` ones at publish;
// here, as in http_import_test.ts, the consumer's import map declares the same npm mappings.
import { join } from "node:path";
import { assert, assertEquals, assertMatch } from "../_assert.ts";
import { serveFolder } from "../_helpers/static_server.ts";
import { ROOT, runCli, withHome } from "../cli/_run_cli.ts";

const CONFIG = JSON.parse(await Deno.readTextFile(join(ROOT, "deno.json")));

/** The checkout's files that `deno publish` would upload, relative to ROOT. */
async function publishedFiles(): Promise<string[]> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["publish", "--dry-run", "--allow-dirty", "--no-check"],
    cwd: ROOT,
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(output.stdout) + new TextDecoder().decode(output.stderr);
  assertEquals(output.code, 0, text);
  const root = new URL(`file://${ROOT.endsWith("/") ? ROOT : `${ROOT}/`}`).href;
  return [...text.matchAll(/^\s+(file:\/\/\S+) \(/gm)].map(([, url]) => url.slice(root.length));
}

Deno.test("svc llm run --model demo/chat from the published files over HTTP, offline, answers a chat", async () => {
  const files = await publishedFiles();
  assert(files.includes("cli.ts") && files.includes("deno.json"), files.join("\n"));
  assert(!files.some((f) => f.startsWith("tests/") || f.includes("node_modules/")), files.join());
  // The package as JSR would hold it: links to the published files only.
  const pkg = await Deno.makeTempDir({ prefix: "svc_published_" });
  try {
    for (const file of files) {
      await Deno.mkdir(join(pkg, file, ".."), { recursive: true });
      await Deno.symlink(join(ROOT, file), join(pkg, file));
    }
    await using server = serveFolder(pkg);
    await withHome(async (home) => {
      // A scratch consumer folder (also SVC_HOME: the demo model is generated there, fresh).
      await Deno.writeTextFile(
        join(home, "deno.json"),
        JSON.stringify({ imports: CONFIG.imports }),
      );
      let answer: { status: number; body: Record<string, unknown> } | undefined;
      const result = await runCli(
        ["llm", "run", "--model", "demo/chat", "--port", "0", "--device", "cpu", "--offline"],
        {
          perms: [
            `--allow-import=${new URL(server.baseUrl).host}`,
            "--allow-read",
            "--allow-write",
            "--allow-env",
            "--allow-ffi",
            "--allow-sys",
            "--allow-net=127.0.0.1",
          ],
          home,
          main: {
            module: `${server.baseUrl}cli.ts`,
            flags: ["--config=deno.json", "--no-lock", `--reload=${server.baseUrl}`],
          },
          // Nothing but loopback: any other request goes to a port where nothing listens.
          env: {
            HTTP_PROXY: "http://127.0.0.1:9",
            HTTPS_PROXY: "http://127.0.0.1:9",
            NO_PROXY: "127.0.0.1,localhost",
          },
          onStart: (child, output) => {
            const poll = setInterval(async () => {
              const base = output.stdout().match(/svc: serving .* at (http:\/\/\S+\/v1) /)?.[1];
              if (!base) return;
              clearInterval(poll);
              try {
                const res = await fetch(`${base}/chat/completions`, {
                  method: "POST",
                  headers: { "content-type": "application/json" },
                  body: JSON.stringify({
                    model: "demo/chat",
                    messages: [{ role: "user", content: "Say hello." }],
                    max_tokens: 8,
                    temperature: 0,
                  }),
                });
                answer = { status: res.status, body: await res.json() };
              } finally {
                child.kill("SIGTERM");
              }
            }, 100);
            child.status.then(() => clearInterval(poll));
          },
        },
      );
      assertEquals(result.code, 0, `${result.stdout}\n${result.stderr}`);
      assertMatch(result.stdout, /svc: serving demo\/chat \(chat, q8, RANDOM weights\)/);
      assertEquals(answer?.status, 200, JSON.stringify(answer));
      const choice = (answer!.body.choices as { message: { role: string; content: string } }[])[0];
      assertEquals(choice.message.role, "assistant");
      assertEquals(typeof choice.message.content, "string");
      assert(
        (answer!.body.usage as { completion_tokens: number }).completion_tokens > 0,
        JSON.stringify(answer),
      );
    });
    // The code, the tokenizer's data included, came from the server, not from the checkout.
    for (const path of ["/cli.ts", "/src/engine/generated_models/_qwen_vocab.ts"]) {
      assert(server.served.includes(path), `never served ${path}`);
    }
  } finally {
    await Deno.remove(pkg, { recursive: true });
  }
});
