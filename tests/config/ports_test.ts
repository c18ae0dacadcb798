import { isWsl, SvcPorts } from "../../src/config/ports.ts";
import { ConfigurationError, ValidationError } from "../../src/core/errors.ts";
import { assert, assertEquals, assertRejects, assertThrows } from "../_assert.ts";

const WSL2_OSRELEASE = "5.15.153.1-microsoft-standard-WSL2";
const PLAIN_VERSION = "Linux version 6.1.0-18-amd64 (debian-kernel@lists.debian.org) gcc-12";

Deno.test("SvcPorts has the spec's constants with exactly those values", () => {
  assertEquals(SvcPorts.GATEWAY_DEFAULT, 8000);
  assertEquals(SvcPorts.LLM_DEFAULT, 8001);
  assertEquals(SvcPorts.LLM_WSL_FALLBACK, 8901);
  assertEquals(SvcPorts.BENCHMARK_LLM, 8901);
  assertEquals(SvcPorts.STUDIO_BACKEND, 8080);
  assertEquals(SvcPorts.STUDIO_FRONTEND, 5173);
  assertEquals(SvcPorts.EMBEDDING_DEFAULT, 8090);
});

Deno.test("SvcPorts is frozen so no module can change a port", () => {
  assert(Object.isFrozen(SvcPorts));
  assertThrows(() => {
    (SvcPorts as unknown as Record<string, number>).GATEWAY_DEFAULT = 1;
  }, TypeError);
  assertEquals(SvcPorts.GATEWAY_DEFAULT, 8000);
});

Deno.test("getLlmPorts() lists 8001 then 8901 and returns a fresh array", () => {
  const ports = SvcPorts.getLlmPorts();
  assertEquals(ports, [8001, 8901]);
  ports.pop();
  assertEquals(SvcPorts.getLlmPorts(), [8001, 8901]);
});

Deno.test("isWsl() is true when /proc names the microsoft WSL2 kernel", () => {
  const read = (path: string) => path === "/proc/sys/kernel/osrelease" ? WSL2_OSRELEASE : null;
  assert(isWsl({ readProcText: read }));
  assert(SvcPorts.isWsl({ readProcText: read }));
  const versionOnly = (path: string) =>
    path === "/proc/version" ? "Linux version 5.10.16.3-microsoft-standard-WSL2" : null;
  assert(isWsl({ readProcText: versionOnly }));
});

Deno.test("isWsl() is false on a plain kernel, unreadable files or a throwing reader", () => {
  assertEquals(isWsl({ readProcText: () => PLAIN_VERSION }), false);
  assertEquals(isWsl({ readProcText: () => null }), false);
  assertEquals(
    isWsl({
      readProcText: () => {
        throw new Error("EACCES");
      },
    }),
    false,
  );
});

Deno.test("isWsl() without a reader answers from this machine's kernel release", () => {
  const expected = Deno.build.os === "linux" && /microsoft|wsl2/i.test(Deno.osRelease());
  assertEquals(isWsl(), expected);
  assertEquals(isWsl(), expected); // the cached answer is the same
  assertEquals(SvcPorts.getRecommendedLlmPort(), expected ? 8901 : 8001);
});

Deno.test("isWsl() reads the kernel release through the reader's osrelease path", () => {
  const asked: string[] = [];
  isWsl({
    readProcText: (path) => {
      asked.push(path);
      return null;
    },
  });
  assertEquals(asked, ["/proc/sys/kernel/osrelease", "/proc/version"]);
});

Deno.test("getRecommendedLlmPort() is 8901 on WSL2 and 8001 elsewhere", () => {
  assertEquals(SvcPorts.getRecommendedLlmPort({ readProcText: () => WSL2_OSRELEASE }), 8901);
  assertEquals(SvcPorts.getRecommendedLlmPort({ readProcText: () => PLAIN_VERSION }), 8001);
});

Deno.test("isAvailable() is false while a listener holds the port and true after it closes", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  try {
    assertEquals(await SvcPorts.isAvailable(port, "127.0.0.1"), false);
    // 0.0.0.0 overlaps 127.0.0.1: the bind or the connect probe must see the listener.
    assertEquals(await SvcPorts.isAvailable(port, "0.0.0.0"), false);
    assertEquals(await SvcPorts.isAvailable(port), false);
  } finally {
    listener.close();
  }
  assertEquals(await SvcPorts.isAvailable(port, "127.0.0.1"), true);
});

Deno.test("isAvailable() sees a listener on all interfaces when asked about loopback", async () => {
  const listener = Deno.listen({ hostname: "0.0.0.0", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  try {
    assertEquals(await SvcPorts.isAvailable(port, "127.0.0.1"), false);
  } finally {
    listener.close();
  }
});

Deno.test("isAvailable() rejects ports outside 1-65535 with ValidationError", async () => {
  for (const bad of [0, -1, 65536, 70000, 80.5, NaN]) {
    await assertRejects(() => SvcPorts.isAvailable(bad, "127.0.0.1"), ValidationError, "port");
  }
});

Deno.test({
  name: "isAvailable() names --allow-net when network permission is missing",
  permissions: { net: false, read: true },
  fn: async () => {
    await assertRejects(
      () => SvcPorts.isAvailable(SvcPorts.GATEWAY_DEFAULT, "127.0.0.1"),
      ConfigurationError,
      "--allow-net",
    );
  },
});
