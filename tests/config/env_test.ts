import { loadConfig, readEnvVariable, redactConfig, setEnvVariable } from "../../src/config/env.ts";
import { ENV_VARIABLES, parseBooleanWord, parseEnvValue } from "../../src/config/env_vars.ts";
import { parseEnvText } from "../../src/config/env_file.ts";
import { ConfigurationError } from "../../src/core/errors.ts";
import { assert, assertEquals, assertThrows } from "../_assert.ts";

const SPEC_VARIABLES = [
  "COMPAT_API_KEY",
  "COMPAT_BASE_URL",
  "HUB_TOKEN",
  "HUB_ENDPOINT",
  "ENGINE_API_KEY",
  "SVC_CHAT_API_KEY",
  "SVC_CHAT_MODEL",
  "SVC_CHAT_BASE_URL",
  "SVC_EMBEDDING_BASE_URL",
  "SVC_EMBEDDING_MODEL",
  "SVC_LLM_PORT",
  "SVC_EMBEDDING_PORT",
  "SVC_FORCE_CHINA_MIRROR",
];

async function withEnvFile(text: string, fn: (path: string) => Promise<void> | void) {
  const dir = await Deno.makeTempDir({ prefix: "svc_env_test_" });
  try {
    const path = `${dir}/.env`;
    await Deno.writeTextFile(path, text);
    await fn(path);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("ENV_VARIABLES covers every variable of the spec plus Svc's own", () => {
  const names = ENV_VARIABLES.map((v) => v.name);
  for (const name of SPEC_VARIABLES) assert(names.includes(name), `${name} missing`);
  for (const name of ["SVC_HOME", "SVC_LOG_LEVEL", "SVC_DEVICE", "SVC_OFFLINE"]) {
    assert(names.includes(name), `${name} missing`);
  }
  assertEquals(new Set(names).size, names.length);
});

Deno.test(".env.template lists every variable with a one-line comment and a valid default", async () => {
  const path = new URL("../../.env.template", import.meta.url).pathname;
  const text = await Deno.readTextFile(path);
  const lines = text.split("\n");
  for (const variable of ENV_VARIABLES) {
    const index = lines.findIndex((line) => line.startsWith(`${variable.name}=`));
    assert(index > 0, `${variable.name} missing from .env.template`);
    assertEquals(lines[index - 1], `# ${variable.description}`, `comment of ${variable.name}`);
    assertEquals(lines[index], `${variable.name}=${variable.defaultText}`);
  }
  assertEquals(Object.keys(parseEnvText(text)).sort(), ENV_VARIABLES.map((v) => v.name).sort());
  const config = loadConfig({ env: {}, envFile: path });
  assertEquals(config.llmPort, 8001);
  assertEquals(config.compatApiKey, undefined);
});

Deno.test("loadConfig() gives the defaults when nothing is set", () => {
  const config = loadConfig({ env: {}, envFile: null });
  assertEquals(config.llmPort, 8001);
  assertEquals(config.embeddingPort, 8090);
  assertEquals(config.forceChinaMirror, false);
  assertEquals(config.offline, false);
  assertEquals(config.device, "auto");
  assertEquals(config.logLevel, "info");
  assertEquals(config.chatApiKey, undefined);
  assertEquals(config.home, undefined);
  assertEquals(config.sources.llmPort, "default");
  assertEquals(config.envFile, null);
  assert(Object.isFrozen(config));
  assert(Object.isFrozen(config.sources));
});

Deno.test("loadConfig() reads and converts every kind of value from the env map", () => {
  const config = loadConfig({
    env: {
      COMPAT_API_KEY: "sk-compat",
      COMPAT_BASE_URL: "https://api.example.com/v1/",
      HUB_TOKEN: "hf_token",
      HUB_ENDPOINT: "http://127.0.0.1:9000",
      ENGINE_API_KEY: "engine",
      SVC_CHAT_API_KEY: "chat",
      SVC_CHAT_MODEL: "smollm2",
      SVC_CHAT_BASE_URL: "http://localhost:8000/v1",
      SVC_EMBEDDING_BASE_URL: "http://localhost:8090/v1",
      SVC_EMBEDDING_MODEL: "minilm",
      SVC_LLM_PORT: "8901",
      SVC_EMBEDDING_PORT: " 9090 ",
      SVC_FORCE_CHINA_MIRROR: "YES",
      SVC_HOME: "/data/svc",
      SVC_LOG_LEVEL: "Warning",
      SVC_DEVICE: "WebGPU",
      SVC_OFFLINE: "on",
    },
    envFile: null,
  });
  assertEquals(config.compatApiKey, "sk-compat");
  assertEquals(config.compatBaseUrl, "https://api.example.com/v1"); // trailing slash dropped
  assertEquals(config.hubToken, "hf_token");
  assertEquals(config.hubEndpoint, "http://127.0.0.1:9000");
  assertEquals(config.engineApiKey, "engine");
  assertEquals(config.chatApiKey, "chat");
  assertEquals(config.chatModel, "smollm2");
  assertEquals(config.chatBaseUrl, "http://localhost:8000/v1");
  assertEquals(config.embeddingBaseUrl, "http://localhost:8090/v1");
  assertEquals(config.embeddingModel, "minilm");
  assertEquals(config.llmPort, 8901);
  assertEquals(config.embeddingPort, 9090);
  assertEquals(config.forceChinaMirror, true);
  assertEquals(config.home, "/data/svc");
  assertEquals(config.logLevel, "warn");
  assertEquals(config.device, "webgpu");
  assertEquals(config.offline, true);
  assertEquals(config.sources.llmPort, "env");
});

Deno.test("parseBooleanWord() accepts the eight words in any case and nothing else", () => {
  for (const word of ["true", "TRUE", "1", "yes", "Yes", "on", "ON"]) {
    assertEquals(parseBooleanWord(word), true, word);
  }
  for (const word of ["false", "False", "0", "no", "NO", "off", "Off"]) {
    assertEquals(parseBooleanWord(word), false, word);
  }
  for (const word of ["maybe", "", "2", "y", "enabled"]) {
    assertEquals(parseBooleanWord(word), undefined, word);
  }
});

Deno.test("loadConfig() raises ConfigurationError naming the variable and value for bad values", () => {
  const cases: [string, string, string][] = [
    ["SVC_LLM_PORT", "abc", "port number"],
    ["SVC_LLM_PORT", "70000", "1 to 65535"],
    ["SVC_EMBEDDING_PORT", "0", "1 to 65535"],
    ["SVC_EMBEDDING_PORT", "80.5", "port number"],
    ["SVC_FORCE_CHINA_MIRROR", "maybe", "boolean"],
    ["SVC_OFFLINE", "2", "boolean"],
    ["COMPAT_BASE_URL", "not a url", "URL"],
    ["SVC_CHAT_BASE_URL", "ftp://example.com", "http"],
    ["SVC_DEVICE", "tpu", "auto, webgpu, cpu, wasm"],
    ["SVC_LOG_LEVEL", "loud", "debug"],
  ];
  for (const [name, value, expected] of cases) {
    const err = assertThrows(
      () => loadConfig({ env: { [name]: value }, envFile: null }),
      ConfigurationError,
    );
    assert(err.message.includes(name), err.message);
    assert(err.message.includes(JSON.stringify(value)), err.message);
    assert(err.message.includes(expected), err.message);
    assertEquals(err.param, name);
  }
});

Deno.test("parseEnvValue() trims secrets, accepts any text for them, and names the origin", () => {
  const key = ENV_VARIABLES.find((v) => v.name === "COMPAT_API_KEY")!;
  assertEquals(parseEnvValue(key, " sk-123 \t"), "sk-123");
  assertEquals(parseEnvValue(key, "any text at all"), "any text at all");
  const url = ENV_VARIABLES.find((v) => v.name === "COMPAT_BASE_URL")!;
  assertThrows(() => parseEnvValue(url, "nope", "file x.env entry"), ConfigurationError, "x.env");
});

Deno.test("loadConfig() precedence is option > process env > .env file > default", async () => {
  await withEnvFile("SVC_LLM_PORT=8101\nSVC_EMBEDDING_PORT=8102\nSVC_CHAT_MODEL=file-model\n", (
    path,
  ) => {
    const env = { SVC_LLM_PORT: "8201", SVC_EMBEDDING_PORT: "8202" };
    const config = loadConfig({ env, envFile: path, overrides: { llmPort: 8301 } });
    assertEquals(config.llmPort, 8301);
    assertEquals(config.sources.llmPort, "option");
    assertEquals(config.embeddingPort, 8202);
    assertEquals(config.sources.embeddingPort, "env");
    assertEquals(config.chatModel, "file-model");
    assertEquals(config.sources.chatModel, "file");
    assertEquals(config.device, "auto");
    assertEquals(config.sources.device, "default");
    assertEquals(config.envFile, path);
  });
});

Deno.test("loadConfig() treats empty values as unset at every level", async () => {
  await withEnvFile("SVC_LLM_PORT=8101\nSVC_CHAT_MODEL=\n", (path) => {
    const config = loadConfig({
      env: { SVC_LLM_PORT: "", SVC_CHAT_MODEL: "" },
      envFile: path,
      overrides: { llmPort: "" },
    });
    assertEquals(config.llmPort, 8101);
    assertEquals(config.chatModel, undefined);
  });
});

Deno.test("loadConfig() validates string overrides and names the option", () => {
  assertEquals(
    loadConfig({ env: {}, envFile: null, overrides: { llmPort: "8123" } }).llmPort,
    8123,
  );
  assertEquals(
    loadConfig({ env: {}, envFile: null, overrides: { offline: "yes" } }).offline,
    true,
  );
  assertThrows(
    () => loadConfig({ env: {}, envFile: null, overrides: { llmPort: 70000 } }),
    ConfigurationError,
    "option llmPort (SVC_LLM_PORT)",
  );
});

Deno.test("loadConfig() reports a bad .env entry with the file name", async () => {
  await withEnvFile("SVC_DEVICE=tpu\n", (path) => {
    assertThrows(() => loadConfig({ env: {}, envFile: path }), ConfigurationError, path);
  });
});

Deno.test("loadConfig() accepts a missing .env file", () => {
  const config = loadConfig({ env: {}, envFile: "/nonexistent/svc/.env" });
  assertEquals(config.envFile, null);
  assertEquals(config.llmPort, 8001);
});

Deno.test("loadConfig() reads the process environment when no env map is given", async () => {
  const before = Deno.env.get("SVC_CHAT_MODEL");
  Deno.env.set("SVC_CHAT_MODEL", "from-process");
  try {
    await withEnvFile("SVC_CHAT_MODEL=from-file\n", (path) => {
      const config = loadConfig({ envFile: path });
      assertEquals(config.chatModel, "from-process");
      assertEquals(config.sources.chatModel, "env");
    });
  } finally {
    if (before === undefined) Deno.env.delete("SVC_CHAT_MODEL");
    else Deno.env.set("SVC_CHAT_MODEL", before);
  }
});

Deno.test({
  name: "loadConfig() names --allow-env when env permission is missing",
  permissions: { env: false, read: true },
  fn: () => {
    const err = assertThrows(
      () => loadConfig({ envFile: null }),
      ConfigurationError,
      "--allow-env",
    );
    assertEquals(err.exitCode, 78);
    assertThrows(() => readEnvVariable("HOME"), ConfigurationError, "--allow-env=HOME");
    // An explicit map needs no permission.
    assertEquals(loadConfig({ env: {}, envFile: null }).llmPort, 8001);
  },
});

Deno.test({
  name: "loadConfig() names --allow-read when an explicit .env file cannot be read",
  permissions: { env: true, read: false },
  fn: () => {
    assertThrows(
      () => loadConfig({ env: {}, envFile: "/tmp/svc-some.env" }),
      ConfigurationError,
      "--allow-read",
    );
  },
});

Deno.test("setEnvVariable() writes to the given map or to the process env", () => {
  const env: Record<string, string | undefined> = {};
  setEnvVariable("SVC_TEST_VALUE", "a", { env });
  assertEquals(env.SVC_TEST_VALUE, "a");
  assertEquals(Deno.env.get("SVC_TEST_VALUE"), undefined);
  setEnvVariable("SVC_TEST_VALUE", "b");
  try {
    assertEquals(readEnvVariable("SVC_TEST_VALUE"), "b");
  } finally {
    Deno.env.delete("SVC_TEST_VALUE");
  }
});

Deno.test("redactConfig() hides every secret and keeps the other values", () => {
  const config = loadConfig({
    env: {
      COMPAT_API_KEY: "sk-1",
      HUB_TOKEN: "hf_2",
      ENGINE_API_KEY: "e-3",
      SVC_CHAT_API_KEY: "c-4",
      SVC_CHAT_MODEL: "m",
    },
    envFile: null,
  });
  const shown = redactConfig(config);
  assertEquals(shown.compatApiKey, "***");
  assertEquals(shown.hubToken, "***");
  assertEquals(shown.engineApiKey, "***");
  assertEquals(shown.chatApiKey, "***");
  assertEquals(shown.chatModel, "m");
  assertEquals(shown.llmPort, 8001);
  const text = JSON.stringify(shown);
  for (const secret of ["sk-1", "hf_2", "e-3", "c-4"]) assert(!text.includes(secret));
});
