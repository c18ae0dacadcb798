import { assertEquals } from "../_assert.ts";

// Each in a process of its own: the setting is per process and set once.
async function tunedIn(permissions: string[]): Promise<string> {
  const module = new URL("../../src/engine/allocator_tuning.ts", import.meta.url).href;
  const script = await Deno.makeTempFile({ suffix: ".ts" });
  try {
    await Deno.writeTextFile(
      script,
      `import { tuneAllocator } from ${JSON.stringify(module)};\n` +
        "console.log(tuneAllocator(), tuneAllocator());\n",
    );
    const { stdout } = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--no-prompt", "--allow-read", ...permissions, script],
      stderr: "inherit",
    }).output();
    return new TextDecoder().decode(stdout).trim();
  } finally {
    await Deno.remove(script);
  }
}

Deno.test({
  name:
    "tuneAllocator() sets glibc's malloc once on Linux, and leaves it alone without --allow-ffi",
  ignore: Deno.build.os !== "linux",
  async fn() {
    assertEquals(await tunedIn(["--allow-ffi"]), "true true");
    assertEquals(await tunedIn([]), "false false");
  },
});
