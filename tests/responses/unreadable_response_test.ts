// A stored response whose file the server may not read is a 500 that says so (over a real socket),
// not a 404 as if it were gone: once with Deno's read permission denied for the file (a server
// subprocess run with --deny-read), once with the file's mode (not as root, who reads anyway).
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { ResponseStore, type StoredResponse } from "../../src/responses/response_store.ts";
import { ResponseAssembler } from "../../src/protocol/responses_response.ts";
import { createEngineApp } from "../../src/server/engine_app.ts";
import { setupLogger } from "../../src/core/logging.ts";
import { assert, assertEquals, assertMatch } from "../_assert.ts";

setupLogger("critical");
const SERVER = fileURLToPath(new URL("./_folder_responses_server.ts", import.meta.url));
const CONFIG = fileURLToPath(new URL("../../deno.json", import.meta.url));
const MISSING = `resp_${"0".repeat(32)}`;

async function storedIn(dir: string): Promise<string> {
  const assembler = new ResponseAssembler({ model: "m", input: "hi" }, { model: "m" });
  assembler.text("hello");
  assembler.finish("stop", { promptTokens: 1, completionTokens: 1 });
  const entry: StoredResponse = {
    response: assembler.response,
    messages: [{ role: "user", content: "hi" }, { role: "assistant", content: "hello" }],
  };
  assert((await new ResponseStore({ dir }).put(entry)).stored);
  return entry.response.id;
}

// GET and DELETE of the unreadable response answer the same 500; an unknown one is still a 404.
async function checkUnreadable(base: string, id: string, why: RegExp): Promise<void> {
  for (const method of ["GET", "DELETE"]) {
    const res = await fetch(`${base}/v1/responses/${id}`, { method });
    const body = await res.json();
    assertEquals(res.status, 500, `${method}: ${JSON.stringify(body)}`);
    assertEquals(body.error.type, "server_error");
    assertEquals(body.error.code, "configuration_error");
    assertMatch(body.error.message, new RegExp(`'${id}' exists but its file ${id}\\.json`));
    assertMatch(body.error.message, why);
  }
  const missing = await fetch(`${base}/v1/responses/${MISSING}`);
  assertEquals(missing.status, 404);
  await missing.body?.cancel();
}

Deno.test("stored responses: a file Deno may not read (--deny-read) is a 500 naming it, not a 404", async () => {
  const dir = await Deno.makeTempDir({ prefix: "svc-responses-" });
  try {
    const id = await storedIn(dir);
    const child = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--quiet",
        "--no-prompt",
        `--config=${CONFIG}`,
        "--allow-all",
        `--deny-read=${join(dir, `${id}.json`)}`,
        SERVER,
        dir,
      ],
      stdin: "piped",
      stdout: "piped",
      stderr: "null",
    }).spawn();
    const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
    try {
      let out = "";
      while (!out.includes("\n")) {
        const { value, done } = await lines.read();
        if (done) throw new Error(`the server ended before listening: ${out}`);
        out += value;
      }
      await checkUnreadable(out.split("\n")[0], id, /without Deno's read permission.*--allow-read/);
    } finally {
      await child.stdin.close();
      await lines.cancel();
      await child.status;
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test({
  name: "stored responses: a file whose mode forbids reading it is a 500 naming it, not a 404",
  // Root reads a file whatever its mode.
  ignore: Deno.uid() === 0,
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "svc-responses-" });
    const server = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen: () => {} },
      createEngineApp({ engines: [], responsesDir: dir }),
    );
    try {
      const id = await storedIn(dir);
      await Deno.chmod(join(dir, `${id}.json`), 0o000);
      await checkUnreadable(
        `http://127.0.0.1:${server.addr.port}`,
        id,
        /the server's user has no permission to read it/,
      );
    } finally {
      await server.shutdown();
      await Deno.remove(dir, { recursive: true });
    }
  },
});
