// Runs a probe script in a Deno process of its own and returns the JSON lines it prints. Tests use
// it to run another device: one process holds either the native or the web ONNX Runtime
// (src/engine/runtime.ts).
import { assertEquals } from "../_assert.ts";

/** Runs `script` with `args` (model permissions, loopback only) and parses its `{…}` lines. */
export async function runProbe<T>(script: URL, args: string[]): Promise<T[]> {
  const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-read",
      "--allow-write",
      "--allow-env",
      "--allow-ffi",
      "--allow-sys",
      "--allow-net=127.0.0.1",
      script.pathname,
      ...args,
    ],
    env: { XDG_RUNTIME_DIR: "/tmp" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const err = new TextDecoder().decode(stderr);
  const lines = new TextDecoder().decode(stdout).split("\n").filter((l) => l.startsWith("{"));
  // Say how far it got: a crash after the last result differs from one before the first.
  assertEquals(
    code,
    0,
    `${script.pathname} ${args[0] ?? ""} exited ${code} after ${lines.length} results:\n${err}`,
  );
  return lines.map((l) => JSON.parse(l) as T);
}
