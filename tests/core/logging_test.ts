import { assert, assertEquals, assertMatch, assertThrows } from "../_assert.ts";
import { ConfigurationError, ValidationError } from "../../src/core/errors.ts";
import {
  clearSecrets,
  getLogger,
  isSecretKey,
  LogLevel,
  parseLogLevel,
  redactFields,
  redactSecrets,
  registerSecret,
  setupLogger,
} from "../../src/core/logging.ts";

/** Sends lines to an array instead of stderr for the duration of `fn`. */
function capture(level: string, fn: (lines: string[]) => void, logFile?: string): string[] {
  const lines: string[] = [];
  setupLogger({ level, stderr: false, sink: (line) => lines.push(line), logFile });
  try {
    fn(lines);
  } finally {
    setupLogger({ level: "info", stderr: false });
    clearSecrets();
  }
  return lines;
}

Deno.test("LogLevel lists debug, info, warn, error and silent", () => {
  assertEquals(Object.values(LogLevel), ["debug", "info", "warn", "error", "silent"]);
});

Deno.test("parseLogLevel() accepts any case and aliases, rejects unknown names", () => {
  assertEquals(parseLogLevel("DEBUG"), "debug");
  assertEquals(parseLogLevel(" Warning "), "warn");
  assertEquals(parseLogLevel("critical"), "error");
  assertEquals(parseLogLevel("off"), "silent");
  const err = assertThrows(
    () => parseLogLevel("loud"),
    ValidationError,
    "unknown log level 'loud'",
  );
  assertEquals(err.param, "level");
  assertThrows(() => setupLogger("verbose"), ValidationError);
});

Deno.test("logger writes one line with timestamp, level, name, message and fields", () => {
  const lines = capture("info", () => {
    getLogger("server").info("listening", {
      port: 8000,
      host: "0.0.0.0",
      tags: ["a"],
      note: "a b",
    });
  });
  assertEquals(lines.length, 1);
  assertMatch(
    lines[0],
    /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z INFO {2}\[server\] listening port=8000 host=0\.0\.0\.0 tags=\["a"\] note="a b"$/,
  );
});

Deno.test("logger keeps multi-line messages and values on one line", () => {
  const lines = capture("debug", () => {
    getLogger("x").error("first\nsecond\r\nthird", { detail: "one\ntwo" });
  });
  assertEquals(lines.length, 1);
  assert(!lines[0].includes("\n") && !lines[0].includes("\r"));
  assert(lines[0].includes("first\\nsecond\\nthird"));
});

Deno.test("logger drops events below the configured level and everything when silent", () => {
  const lines = capture("warn", () => {
    const log = getLogger("lvl");
    log.debug("d");
    log.info("i");
    log.warn("w");
    log.error("e");
    assert(!log.isEnabled("info"));
    assert(log.isEnabled("error"));
  });
  assertEquals(lines.map((l) => l.split(" ")[1]), ["WARN", "ERROR"]);
  const none = capture("silent", () => {
    getLogger("lvl").error("nothing");
    assert(!getLogger("lvl").isEnabled("error"));
  });
  assertEquals(none, []);
});

Deno.test("getLogger() returns one logger per name that follows later setupLogger() calls", () => {
  const early = getLogger("early");
  assert(early === getLogger("early"));
  assertEquals(early.name, "early");
  const lines = capture("debug", () => early.debug("seen"));
  assertEquals(lines.length, 1);
});

Deno.test("logger redacts fields whose names look secret, at any depth", () => {
  const lines = capture("info", () => {
    getLogger("cfg").info("config", {
      apiKey: "abc123secret",
      api_key: "def456secret",
      hub_token: "hubvalue999",
      Authorization: "xyz-auth-777",
      nested: { password: "pw-value-1", inner: [{ client_secret: "cs-value-2" }] },
      promptTokens: 12,
      max_tokens: 30,
    });
  });
  const line = lines[0];
  for (const secret of ["abc123secret", "def456secret", "hubvalue999", "xyz-auth-777"]) {
    assert(!line.includes(secret), `${secret} leaked: ${line}`);
  }
  assert(!line.includes("pw-value-1") && !line.includes("cs-value-2"), line);
  assert(line.includes("apiKey=[REDACTED]"));
  assert(line.includes("promptTokens=12") && line.includes("max_tokens=30"), line);
});

Deno.test("logger redacts Bearer credentials and key-shaped strings in messages", () => {
  const lines = capture("info", () => {
    const log = getLogger("http");
    log.info("got Authorization: Bearer eyJhbGciOi.payload.sig from client");
    log.info("calling with sk-proj-ABCDEFGHIJKLMNOP and hf_abcdefghijklmnop");
    log.info("url", { url: "https://user:hunter22@example.test/v1?api_key=qwerty123&x=1" });
    log.info("the token limit is 512, prompt had 12 tokens");
  });
  const all = lines.join("\n");
  for (
    const secret of [
      "eyJhbGciOi",
      "ABCDEFGHIJKLMNOP",
      "hf_abcdefghijklmnop",
      "hunter22",
      "qwerty123",
    ]
  ) {
    assert(!all.includes(secret), `${secret} leaked: ${all}`);
  }
  assert(lines[0].includes("Bearer [REDACTED]"));
  assert(lines[2].includes("x=1"), "redaction must stop at the end of the value");
  assert(lines[3].endsWith("the token limit is 512, prompt had 12 tokens"), lines[3]);
});

Deno.test("logger redacts registered secrets wherever they appear, in output and file", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const file = `${dir}/logs/svc.log`;
    const key = "local-key-7f3a9c";
    const lines = capture("debug", () => {
      registerSecret(key);
      const log = getLogger("auth");
      log.debug(`checking key ${key}`);
      log.info("request", { header: `x-key ${key}`, user: { note: key } });
      log.warn("failed", { err: new Error(`bad key ${key}`) });
      log.error(key);
    }, file);
    assertEquals(lines.length, 4);
    const text = await Deno.readTextFile(file);
    assertEquals(text.trimEnd().split("\n"), lines);
    assert(!text.includes(key) && !lines.join("").includes(key));
    assert(text.includes("[REDACTED]"));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("setupLogger() json file format writes one parseable redacted object per line", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const file = `${dir}/svc.jsonl`;
    const lines: string[] = [];
    setupLogger({
      level: "info",
      logFile: file,
      fileFormat: "json",
      stderr: false,
      sink: (l) => lines.push(l),
    });
    registerSecret("json-secret-4242");
    getLogger("j").info('hello "quoted" json-secret-4242', { n: 1, big: 2n, token: "tok-9999" });
    getLogger("j").debug("skipped");
    setupLogger({ level: "info", stderr: false });
    clearSecrets();
    const text = await Deno.readTextFile(file);
    const rows = text.trimEnd().split("\n").map((l) => JSON.parse(l));
    assertEquals(rows.length, 1);
    assertEquals(rows[0].level, "info");
    assertEquals(rows[0].logger, "j");
    assertEquals(rows[0].message, 'hello "quoted" [REDACTED]');
    assertEquals(rows[0].n, 1);
    assertEquals(rows[0].big, "2");
    assertEquals(rows[0].token, "[REDACTED]");
    assert(!text.includes("tok-9999") && !text.includes("json-secret-4242"));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("setupLogger() appends to an existing log file", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const file = `${dir}/a.log`;
    await Deno.writeTextFile(file, "old line\n");
    capture("info", () => getLogger("app").info("new line"), file);
    const rows = (await Deno.readTextFile(file)).trimEnd().split("\n");
    assertEquals(rows.length, 2);
    assertEquals(rows[0], "old line");
    assert(rows[1].endsWith("[app] new line"));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("setupLogger() raises ConfigurationError for a log file it cannot write", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/plain`, "x");
    const err = assertThrows(
      () => setupLogger("info", `${dir}/plain/sub/svc.log`),
      ConfigurationError,
      "cannot write log file",
    );
    assertEquals(err.param, "logFile");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("registerSecret() ignores values too short to be secrets; clearSecrets() forgets", () => {
  registerSecret("abc");
  registerSecret("");
  registerSecret(undefined);
  assertEquals(redactSecrets("abc is fine"), "abc is fine");
  registerSecret("longer-secret");
  registerSecret("longer-secret-with-suffix");
  assertEquals(redactSecrets("a longer-secret-with-suffix b"), "a [REDACTED] b");
  clearSecrets();
  assertEquals(redactSecrets("longer-secret"), "longer-secret");
});

Deno.test("isSecretKey() tells secret field names from token counts", () => {
  for (
    const key of [
      "apiKey",
      "API_KEY",
      "x-api-key",
      "token",
      "hubToken",
      "Authorization",
      "password",
      "clientSecret",
      "auth",
    ]
  ) {
    assert(isSecretKey(key), key);
  }
  for (const key of ["promptTokens", "max_tokens", "tokenizer", "key", "model", "author"]) {
    assert(!isSecretKey(key), key);
  }
});

Deno.test("redactFields() handles cycles, errors, maps and binary data", () => {
  const cyclic: { [k: string]: unknown } = { name: "loop" };
  cyclic.self = cyclic;
  const out = redactFields({
    cyclic,
    err: new TypeError("Bearer abcdef"),
    map: new Map([["password", "p4ssword!"]]),
    bytes: new Uint8Array(3),
  }) as { [k: string]: unknown };
  assertEquals((out.cyclic as { self: unknown }).self, "[Circular]");
  assertEquals(out.err, { name: "TypeError", message: "Bearer [REDACTED]" });
  assertEquals(out.map, { password: "[REDACTED]" });
  assertEquals(out.bytes, "[Uint8Array 3 bytes]");
});

Deno.test("logger writes to the real stderr without leaking a registered key", async () => {
  const script = `
    import { getLogger, registerSecret, setupLogger } from ${
    JSON.stringify(new URL("../../src/core/logging.ts", import.meta.url).href)
  };
    setupLogger("info");
    registerSecret("proc-secret-5150");
    getLogger("child").info("using key proc-secret-5150", { apiKey: "proc-secret-5150" });
    getLogger("child").debug("hidden");
  `;
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["eval", "--quiet", script],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stderr = new TextDecoder().decode(out.stderr);
  assert(out.success, stderr);
  const lines = stderr.trimEnd().split("\n");
  assertEquals(lines.length, 1, stderr);
  assertMatch(lines[0], /INFO {2}\[child\] using key \[REDACTED\] apiKey=\[REDACTED\]$/);
  assert(!stderr.includes("proc-secret-5150"));
  assertEquals(out.stdout.length, 0);
});
