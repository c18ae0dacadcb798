import { parseCommandArgs } from "../../src/cli/args.ts";
import { HTTP_LIMIT_OPTIONS, httpLimitsFrom } from "../../src/cli/_http_limits.ts";
import { ValidationError } from "../../src/core/errors.ts";
import { engineCommand } from "../../src/gateway/engines/engine_command.ts";
import { assertEquals, assertThrows } from "../_assert.ts";

Deno.test("httpLimitsFrom() reads back the limit flags engineCommand() gives an engine", () => {
  const limits = { headerTimeoutMs: 500, maxHeaderBytes: 4096, writeStallTimeoutMs: 900 };
  const cmd = engineCommand({
    kind: "chat",
    hostname: "127.0.0.1",
    port: 8001,
    home: "/tmp/h",
    httpLimits: { ...limits, maxConnections: undefined },
  });
  const args = cmd.args.slice(cmd.args.lastIndexOf("run") + 1);
  const { values } = parseCommandArgs(args, "svc llm run", {
    ...HTTP_LIMIT_OPTIONS,
    kind: { type: "string" },
    port: { type: "string" },
    host: { type: "string" },
    "stop-with-stdin": { type: "boolean" },
    "cors-origins": { type: "string" },
  });
  assertEquals(httpLimitsFrom(values), limits);
});

Deno.test("httpLimitsFrom() rejects a limit that is not a positive whole number, naming the flag", () => {
  for (const bad of ["0", "-1", "1.5", "abc"]) {
    const err = assertThrows(
      () => httpLimitsFrom({ "header-timeout-ms": bad }),
      ValidationError,
      "--header-timeout-ms",
    );
    assertEquals((err as ValidationError).param, "header-timeout-ms");
  }
});
