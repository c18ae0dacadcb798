import {
  formatEnvValue,
  parseEnvText,
  readEnvFile,
  readEnvFileSync,
  updateEnvFile,
} from "../../src/config/env_file.ts";
import { ConfigurationError, ValidationError } from "../../src/core/errors.ts";
import { assert, assertEquals, assertRejects, assertThrows } from "../_assert.ts";

async function inTempDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "svc_env_file_test_" });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("parseEnvText() handles comments, export, quotes and inline comments", () => {
  const text = [
    "\uFEFF# a comment",
    "",
    "PLAIN=value",
    "  SPACED = padded value  ",
    "export EXPORTED=1",
    'DOUBLE="two words # not a comment"',
    "SINGLE='raw \\n stays'",
    'ESCAPED="line1\\nline2 \\"q\\" back\\\\slash"',
    "INLINE=abc # trailing comment",
    "HASH_IN_VALUE=abc#def",
    "EMPTY=",
    'EMPTY_QUOTED=""',
    'MULTI="first',
    'second"',
    "URL=http://127.0.0.1:8000/v1",
    "DUP=first",
    "DUP=second",
  ].join("\r\n");
  assertEquals(parseEnvText(text), {
    PLAIN: "value",
    SPACED: "padded value",
    EXPORTED: "1",
    DOUBLE: "two words # not a comment",
    SINGLE: "raw \\n stays",
    ESCAPED: 'line1\nline2 "q" back\\slash',
    INLINE: "abc",
    HASH_IN_VALUE: "abc#def",
    EMPTY: "",
    EMPTY_QUOTED: "",
    MULTI: "first\nsecond",
    URL: "http://127.0.0.1:8000/v1",
    DUP: "second",
  });
});

Deno.test("parseEnvText() rejects malformed lines with the source and line number", () => {
  assertThrows(
    () => parseEnvText("A=1\nnot an assignment\n", "my.env"),
    ConfigurationError,
    "my.env:2",
  );
  assertThrows(() => parseEnvText("1BAD=x"), ConfigurationError, ".env:1");
  assertThrows(() => parseEnvText('A="never closed\nB=2'), ConfigurationError, "not closed");
  assertThrows(() => parseEnvText('A="x" junk'), ConfigurationError, "after the quoted value");
});

Deno.test("formatEnvValue() output parses back to the same string", () => {
  const values = [
    "",
    "plain",
    "8001",
    "http://h:1/v1",
    "two words",
    'quote " inside',
    "back\\slash",
    "new\nline",
    "tab\there",
    "# hash",
    "'single'",
    "ünïcödé",
  ];
  for (const value of values) {
    const parsed = parseEnvText(`K=${formatEnvValue(value)}\n`);
    assertEquals(parsed.K, value, JSON.stringify(value));
  }
  assertEquals(formatEnvValue("8001"), "8001");
});

Deno.test("readEnvFile() returns null for a missing file and the values otherwise", async () => {
  await inTempDir(async (dir) => {
    assertEquals(await readEnvFile(`${dir}/missing.env`), null);
    assertEquals(readEnvFileSync(`${dir}/missing.env`), null);
    await Deno.writeTextFile(`${dir}/.env`, "A=1\n");
    assertEquals(await readEnvFile(`${dir}/.env`), { A: "1" });
    assertEquals(readEnvFileSync(`${dir}/.env`), { A: "1" });
    // A folder is not a file: a clear error, not a crash.
    await assertRejects(() => readEnvFile(dir), ConfigurationError, dir);
  });
});

Deno.test("updateEnvFile() replaces keys in place keeping comments, order and export", async () => {
  await inTempDir(async (dir) => {
    const path = `${dir}/.env`;
    const original = [
      "# Svc settings",
      "COMPAT_API_KEY=sk-keep   # inline comment kept on other lines",
      "",
      "# the LLM port",
      "export SVC_LLM_PORT=8001",
      'SVC_CHAT_MODEL="old model"',
      "SVC_EMBEDDING_PORT=8090",
      "SVC_EMBEDDING_PORT=8091",
      "",
    ].join("\n");
    await Deno.writeTextFile(path, original);
    await updateEnvFile(path, { SVC_LLM_PORT: 8901, SVC_EMBEDDING_PORT: "9090", NEW_KEY: "a b" });
    const text = await Deno.readTextFile(path);
    assertEquals(
      text,
      [
        "# Svc settings",
        "COMPAT_API_KEY=sk-keep   # inline comment kept on other lines",
        "",
        "# the LLM port",
        "export SVC_LLM_PORT=8901",
        'SVC_CHAT_MODEL="old model"',
        "SVC_EMBEDDING_PORT=9090",
        'NEW_KEY="a b"',
        "",
      ].join("\n"),
    );
    const parsed = parseEnvText(text);
    assertEquals(parsed.SVC_EMBEDDING_PORT, "9090");
    assertEquals(parsed.SVC_CHAT_MODEL, "old model");
    // No temp files left behind.
    const names = [];
    for await (const entry of Deno.readDir(dir)) names.push(entry.name);
    assertEquals(names, [".env"]);
  });
});

Deno.test("updateEnvFile() removes keys given null and replaces multi-line values whole", async () => {
  await inTempDir(async (dir) => {
    const path = `${dir}/cfg.env`;
    await Deno.writeTextFile(path, 'A=1\nB="multi\nline"\nC=3\n');
    await updateEnvFile(path, { A: null, B: "single" });
    assertEquals(await Deno.readTextFile(path), "B=single\nC=3\n");
  });
});

Deno.test("updateEnvFile() creates a missing file and folder with mode 0600", async () => {
  await inTempDir(async (dir) => {
    const path = `${dir}/engines/serve.env`;
    await updateEnvFile(path, { SVC_LLM_PORT: 8001, SVC_FORCE_CHINA_MIRROR: false, GONE: null });
    assertEquals(
      await Deno.readTextFile(path),
      "SVC_LLM_PORT=8001\nSVC_FORCE_CHINA_MIRROR=false\n",
    );
    if (Deno.build.os !== "windows") assertEquals((await Deno.stat(path)).mode! & 0o777, 0o600);
  });
});

Deno.test("updateEnvFile() keeps the file's mode and CRLF line endings", async () => {
  await inTempDir(async (dir) => {
    const path = `${dir}/.env`;
    await Deno.writeTextFile(path, "# c\r\nA=1\r\n");
    if (Deno.build.os !== "windows") await Deno.chmod(path, 0o640);
    await updateEnvFile(path, { A: 2 });
    assertEquals(await Deno.readTextFile(path), "# c\r\nA=2\r\n");
    if (Deno.build.os !== "windows") assertEquals((await Deno.stat(path)).mode! & 0o777, 0o640);
  });
});

Deno.test("updateEnvFile() validates Svc's variables and key names before writing", async () => {
  await inTempDir(async (dir) => {
    const path = `${dir}/.env`;
    await Deno.writeTextFile(path, "SVC_LLM_PORT=8001\n");
    await assertRejects(
      () => updateEnvFile(path, { SVC_LLM_PORT: 70000 }),
      ConfigurationError,
      "SVC_LLM_PORT",
    );
    await assertRejects(() => updateEnvFile(path, { "BAD KEY": "x" }), ValidationError, "BAD KEY");
    await assertRejects(() => updateEnvFile(path, { "A=B": "x" }), ValidationError);
    assertEquals(await Deno.readTextFile(path), "SVC_LLM_PORT=8001\n");
  });
});

Deno.test("updateEnvFile() refuses to rewrite a malformed file", async () => {
  await inTempDir(async (dir) => {
    const path = `${dir}/.env`;
    await Deno.writeTextFile(path, "garbage line\n");
    await assertRejects(() => updateEnvFile(path, { A: "1" }), ConfigurationError, ":1");
    assertEquals(await Deno.readTextFile(path), "garbage line\n");
  });
});

Deno.test("updateEnvFile() run concurrently leaves a parseable file with one of the writes", async () => {
  await inTempDir(async (dir) => {
    const path = `${dir}/.env`;
    await Deno.writeTextFile(path, "# keep\nSVC_LLM_PORT=8001\n");
    await Promise.all(
      [8101, 8102, 8103, 8104].map((port) => updateEnvFile(path, { SVC_LLM_PORT: port })),
    );
    const text = await Deno.readTextFile(path);
    assert(text.startsWith("# keep\n"));
    assert(["8101", "8102", "8103", "8104"].includes(parseEnvText(text).SVC_LLM_PORT));
  });
});

Deno.test({
  name: "updateEnvFile() names --allow-write when write permission is missing",
  permissions: { read: true, write: false, env: true },
  fn: async () => {
    await assertRejects(
      () => updateEnvFile("/tmp/svc_no_write_test/.env", { A: "1" }),
      ConfigurationError,
      "--allow-write",
    );
  },
});
