import {
  CHINA_HF_MIRROR_ENDPOINT,
  DEFAULT_HF_ENDPOINT,
  detectChinaMainland,
  ensureHfMirrorConfigured,
  getHfEndpoint,
  getNetworkRegion,
  type NetworkRegionOptions,
  type ReachabilityProbe,
  resetNetworkRegionCache,
} from "../../src/config/network_region.ts";
import { assert, assertEquals } from "../_assert.ts";

const up: ReachabilityProbe = () => Promise.resolve(true);
const refused: ReachabilityProbe = () => Promise.reject(new TypeError("connection refused"));
const hangs: ReachabilityProbe = () => new Promise<boolean>(() => {});

/** A probe that counts its calls. */
function counting(answer: boolean): ReachabilityProbe & { calls: number } {
  const probe = Object.assign(() => {
    probe.calls++;
    return Promise.resolve(answer);
  }, { calls: 0 });
  return probe;
}

/** Offline options with a non-China locale, unless overridden. */
function offline(extra: NetworkRegionOptions = {}): NetworkRegionOptions {
  return {
    env: {},
    envFile: null,
    chinaProbe: refused,
    internationalProbe: refused,
    timeZone: "Europe/Berlin",
    locale: "en_US.UTF-8",
    probeTimeoutMs: 200,
    ...extra,
  };
}

function regionTest(name: string, fn: () => Promise<void>): void {
  Deno.test(name, async () => {
    resetNetworkRegionCache();
    try {
      await fn();
    } finally {
      resetNetworkRegionCache();
    }
  });
}

Deno.test("the endpoint constants are the mirror and the hub", () => {
  assertEquals(CHINA_HF_MIRROR_ENDPOINT, "https://hf-mirror.com");
  assertEquals(DEFAULT_HF_ENDPOINT, "https://huggingface.co");
});

regionTest("getNetworkRegion() is international when the hub answers", async () => {
  assertEquals(
    await getNetworkRegion(offline({ internationalProbe: up, chinaProbe: up })),
    "international",
  );
});

regionTest("getNetworkRegion() is china when only the China probe answers", async () => {
  const options = offline({ chinaProbe: up, internationalProbe: hangs });
  assertEquals(await getNetworkRegion(options), "china");
  assertEquals(await detectChinaMainland(options), true);
  assertEquals(await getHfEndpoint(options), CHINA_HF_MIRROR_ENDPOINT);
});

regionTest("getNetworkRegion() falls back to the locale when both probes reject", async () => {
  assertEquals(await getNetworkRegion(offline()), "international");
  assertEquals(await detectChinaMainland(offline()), false);
  assertEquals(await getHfEndpoint(offline()), DEFAULT_HF_ENDPOINT);
});

for (const timeZone of ["Asia/Shanghai", "Asia/Chongqing", "Asia/Harbin", "Asia/Urumqi"]) {
  regionTest(`getNetworkRegion() is china offline in time zone ${timeZone}`, async () => {
    assertEquals(await getNetworkRegion(offline({ timeZone })), "china");
  });
}

regionTest("getNetworkRegion() is china offline with a zh_CN locale from LANG", async () => {
  const options = offline({ locale: undefined, env: { LANG: "zh_CN.UTF-8" } });
  assertEquals(await getNetworkRegion(options), "china");
  resetNetworkRegionCache();
  const taiwan = offline({ locale: undefined, env: { LANG: "zh_TW.UTF-8" } });
  assertEquals(await getNetworkRegion(taiwan), "international");
});

regionTest("getNetworkRegion() finishes within the timeout when probes hang forever", async () => {
  let aborted = 0;
  const hangsUntilAborted: ReachabilityProbe = (signal) =>
    new Promise<boolean>(() => {
      signal.addEventListener("abort", () => aborted++);
    });
  const started = performance.now();
  const region = await getNetworkRegion(
    offline({ chinaProbe: hangs, internationalProbe: hangsUntilAborted, probeTimeoutMs: 150 }),
  );
  const elapsed = performance.now() - started;
  assertEquals(region, "international");
  assert(elapsed >= 140, `returned before the timeout (${elapsed} ms)`);
  assert(elapsed < 1500, `took ${elapsed} ms, the bound is the probe timeout`);
  assertEquals(aborted, 1, "the probe's signal is aborted at the timeout");
});

regionTest(
  "getNetworkRegion() treats a probe that throws synchronously as unreachable",
  async () => {
    const throws: ReachabilityProbe = () => {
      throw new Error("boom");
    };
    assertEquals(
      await getNetworkRegion(offline({ chinaProbe: up, internationalProbe: throws })),
      "china",
    );
  },
);

regionTest("getNetworkRegion() probes once and reuses the cached answer", async () => {
  const china = counting(true);
  const international = counting(false);
  const options = offline({ chinaProbe: china, internationalProbe: international });
  const first = getNetworkRegion(options);
  const second = getNetworkRegion(options);
  assert(first === second, "concurrent callers share one detection");
  assertEquals(await first, "china");
  assertEquals(
    await getNetworkRegion(offline({ chinaProbe: up, internationalProbe: up })),
    "china",
  );
  assertEquals([china.calls, international.calls], [1, 1]);
  resetNetworkRegionCache();
  assertEquals(await getNetworkRegion(options), "china");
  assertEquals([china.calls, international.calls], [2, 2]);
});

regionTest("SVC_FORCE_CHINA_MIRROR=true forces china without probing", async () => {
  const probe = counting(true);
  const options = offline({
    env: { SVC_FORCE_CHINA_MIRROR: "true" },
    chinaProbe: probe,
    internationalProbe: probe,
  });
  assertEquals(await getNetworkRegion(options), "china");
  assertEquals(await detectChinaMainland(options), true);
  assertEquals(await getHfEndpoint(options), CHINA_HF_MIRROR_ENDPOINT);
  const decision = await ensureHfMirrorConfigured(options);
  assertEquals(decision, {
    endpoint: CHINA_HF_MIRROR_ENDPOINT,
    source: "mirror",
    changed: true,
    region: "china",
  });
  assertEquals(options.env?.HUB_ENDPOINT, CHINA_HF_MIRROR_ENDPOINT);
  assertEquals(probe.calls, 0);
});

regionTest("SVC_OFFLINE=true skips the probes and lets the locale decide", async () => {
  const probe = counting(true);
  const options = offline({
    env: { SVC_OFFLINE: "1" },
    chinaProbe: probe,
    internationalProbe: probe,
    timeZone: "Asia/Shanghai",
  });
  assertEquals(await getNetworkRegion(options), "china");
  assertEquals(probe.calls, 0);
});

regionTest(
  "ensureHfMirrorConfigured() sets HUB_ENDPOINT to the mirror on china networks",
  async () => {
    const env: Record<string, string | undefined> = {};
    const decision = await ensureHfMirrorConfigured(
      offline({ env, chinaProbe: up, internationalProbe: refused }),
    );
    assertEquals(decision.changed, true);
    assertEquals(decision.source, "mirror");
    assertEquals(env.HUB_ENDPOINT, CHINA_HF_MIRROR_ENDPOINT);
  },
);

regionTest(
  "ensureHfMirrorConfigured() leaves HUB_ENDPOINT unset on international networks",
  async () => {
    const env: Record<string, string | undefined> = {};
    const decision = await ensureHfMirrorConfigured(offline({ env, internationalProbe: up }));
    assertEquals(decision, {
      endpoint: DEFAULT_HF_ENDPOINT,
      source: "default",
      changed: false,
      region: "international",
    });
    assertEquals(env.HUB_ENDPOINT, undefined);
  },
);

regionTest("ensureHfMirrorConfigured() keeps a HUB_ENDPOINT that is already set", async () => {
  const probe = counting(true);
  const env: Record<string, string | undefined> = {
    HUB_ENDPOINT: "http://127.0.0.1:9000/",
    SVC_FORCE_CHINA_MIRROR: "true",
  };
  const options = offline({ env, chinaProbe: probe, internationalProbe: probe });
  const decision = await ensureHfMirrorConfigured(options);
  assertEquals(decision, { endpoint: "http://127.0.0.1:9000", source: "preset", changed: false });
  assertEquals(env.HUB_ENDPOINT, "http://127.0.0.1:9000/");
  assertEquals(await getHfEndpoint(options), "http://127.0.0.1:9000");
  assertEquals(probe.calls, 0);
});

regionTest(
  "ensureHfMirrorConfigured() counts a HUB_ENDPOINT from the .env file as set",
  async () => {
    const dir = await Deno.makeTempDir({ prefix: "svc_region_test_" });
    try {
      await Deno.writeTextFile(`${dir}/.env`, "HUB_ENDPOINT=http://localhost:7000\n");
      const env: Record<string, string | undefined> = {};
      const decision = await ensureHfMirrorConfigured(
        offline({ env, envFile: `${dir}/.env`, chinaProbe: up }),
      );
      assertEquals(decision.source, "preset");
      assertEquals(decision.endpoint, "http://localhost:7000");
      assertEquals(env.HUB_ENDPOINT, undefined);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
);

regionTest("ensureHfMirrorConfigured() writes the process env when no map is given", async () => {
  const before = Deno.env.get("HUB_ENDPOINT");
  const forced = Deno.env.get("SVC_FORCE_CHINA_MIRROR");
  if (before !== undefined) Deno.env.delete("HUB_ENDPOINT");
  Deno.env.set("SVC_FORCE_CHINA_MIRROR", "true");
  try {
    const decision = await ensureHfMirrorConfigured({ envFile: null });
    assertEquals(decision.changed, true);
    assertEquals(Deno.env.get("HUB_ENDPOINT"), CHINA_HF_MIRROR_ENDPOINT);
  } finally {
    if (before === undefined) Deno.env.delete("HUB_ENDPOINT");
    else Deno.env.set("HUB_ENDPOINT", before);
    if (forced === undefined) Deno.env.delete("SVC_FORCE_CHINA_MIRROR");
    else Deno.env.set("SVC_FORCE_CHINA_MIRROR", forced);
  }
});

Deno.test({
  name: "getNetworkRegion() with the default probes and no outside network ends quickly",
  permissions: { net: ["127.0.0.1"], env: true, read: true, sys: true },
  fn: async () => {
    resetNetworkRegionCache();
    try {
      const started = performance.now();
      const region = await getNetworkRegion({
        env: {},
        envFile: null,
        timeZone: "UTC",
        locale: "C",
      });
      assertEquals(region, "international");
      assert(performance.now() - started < 3000);
    } finally {
      resetNetworkRegionCache();
    }
  },
});
