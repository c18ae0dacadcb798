import { assert, assertEquals, assertMatch, assertRejects, assertThrows } from "../_assert.ts";
import { CancelledError, ServiceError, ValidationError } from "../../src/core/errors.ts";
import {
  checkPortAvailable,
  getFreePort,
  getLocalIp,
  waitForPort,
} from "../../src/core/network.ts";

Deno.test("getFreePort() returns a port that can be bound", () => {
  const port = getFreePort();
  assert(Number.isInteger(port) && port > 0 && port <= 65535);
  const listener = Deno.listen({ hostname: "127.0.0.1", port });
  listener.close();
});

Deno.test("checkPortAvailable() is true for a free port", () => {
  const port = getFreePort();
  assertEquals(checkPortAvailable(port, "127.0.0.1"), true);
  assertEquals(checkPortAvailable(port), true);
});

Deno.test("checkPortAvailable() is false for a port in use, on that host and on 0.0.0.0", () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  try {
    const port = listener.addr.port;
    assertEquals(checkPortAvailable(port, "127.0.0.1"), false);
    assertEquals(checkPortAvailable(port), false);
  } finally {
    listener.close();
  }
});

Deno.test("checkPortAvailable() rejects ports out of range", () => {
  for (const port of [0, -1, 65536, 70000, 80.5, NaN]) {
    const err = assertThrows(() => checkPortAvailable(port), ValidationError, "1-65535");
    assertEquals(err.param, "port");
  }
});

Deno.test("network helpers raise ConfigurationError naming --allow-net without permission", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const script = `${dir}/probe.ts`;
    const module = new URL("../../src/core/network.ts", import.meta.url).href;
    await Deno.writeTextFile(
      script,
      `import { checkPortAvailable, getFreePort, waitForPort } from ${JSON.stringify(module)};
       for (const fn of [() => getFreePort(), () => checkPortAvailable(8123), () => waitForPort(8123)]) {
         try { await fn(); console.log("no error"); }
         catch (err) { console.log(err.name + ": " + err.message); }
       }`,
    );
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--no-prompt", "--quiet", script],
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert(out.success, new TextDecoder().decode(out.stderr));
    const lines = new TextDecoder().decode(out.stdout).trimEnd().split("\n");
    assertEquals(lines.length, 3);
    for (const line of lines) assertMatch(line, /^ConfigurationError: .*--allow-net=/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("getLocalIp() picks the first non-loopback, non-link-local IPv4 address", () => {
  const interfaces = [
    { family: "IPv4" as const, name: "lo", address: "127.0.0.1" },
    { family: "IPv6" as const, name: "eth0", address: "fd00::2" },
    { family: "IPv4" as const, name: "eth1", address: "169.254.3.4" },
    { family: "IPv4" as const, name: "eth0", address: "192.168.1.20" },
    { family: "IPv4" as const, name: "wlan0", address: "10.0.0.5" },
  ];
  assertEquals(getLocalIp({ interfaces }), "192.168.1.20");
});

Deno.test("getLocalIp() falls back to 127.0.0.1 when only loopback exists", () => {
  assertEquals(getLocalIp({ interfaces: [] }), "127.0.0.1");
  assertEquals(
    getLocalIp({ interfaces: [{ family: "IPv4", name: "lo", address: "127.0.0.1" }] }),
    "127.0.0.1",
  );
});

Deno.test("getLocalIp() returns an IPv4 address of this machine", () => {
  const ip = getLocalIp();
  assertMatch(ip, /^\d{1,3}(\.\d{1,3}){3}$/);
  const own = Deno.networkInterfaces().map((i) => i.address);
  assert(ip === "127.0.0.1" || own.includes(ip), ip);
});

Deno.test("waitForPort() returns once something starts listening", async () => {
  const port = getFreePort();
  let listener: Deno.TcpListener | null = null;
  const timer = setTimeout(() => {
    listener = Deno.listen({ hostname: "127.0.0.1", port });
  }, 150);
  try {
    const start = performance.now();
    await waitForPort(port, { timeoutMs: 5000, intervalMs: 20 });
    assert(performance.now() - start >= 100);
    assert(listener !== null);
  } finally {
    clearTimeout(timer);
    (listener as Deno.TcpListener | null)?.close();
  }
});

Deno.test("waitForPort() raises ServiceError when nothing listens in time", async () => {
  const port = getFreePort();
  const start = performance.now();
  await assertRejects(
    () => waitForPort(port, { timeoutMs: 200, intervalMs: 20 }),
    ServiceError,
    `nothing is listening on 127.0.0.1:${port} after 200 ms`,
  );
  const elapsed = performance.now() - start;
  assert(elapsed >= 190 && elapsed < 3000, `took ${elapsed} ms`);
});

Deno.test("waitForPort() stops with CancelledError when aborted", async () => {
  const port = getFreePort();
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), 100);
  try {
    await assertRejects(
      () => waitForPort(port, { timeoutMs: 10_000, intervalMs: 5_000, signal: controller.signal }),
      CancelledError,
    );
  } finally {
    clearTimeout(timer);
  }
  await assertRejects(() => waitForPort(0), ValidationError);
});
