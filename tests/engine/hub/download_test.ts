import { dirname, join } from "node:path";
import {
  AuthenticationError,
  CancelledError,
  ConfigurationError,
  NotFoundError,
  ServiceError,
} from "../../../src/core/errors.ts";
import { downloadModel } from "../../../src/engine/hub/download.ts";
import type { HubProgressEvent } from "../../../src/engine/hub/progress.ts";
import { assert, assertEquals, assertMatch, assertRejects } from "../../_assert.ts";
import { type HubStandInOptions, startHubStandIn } from "../../_helpers/hub_stand_in.ts";
import { exists, fakeBytes, writeFakeModel } from "./_fake_model.ts";

const REPO = "demo-org/fake-model";
const FP32_FILES = [
  "config.json",
  "tokenizer.json",
  "tokenizer_config.json",
  "generation_config.json",
  "special_tokens_map.json",
  "modules.json",
  "1_Pooling/config.json",
  "onnx/model.onnx",
];
const FAST = { retryDelayMs: 1, progressIntervalMs: 0 };

/** A fake model served by a stand-in, and an empty cache; all removed on dispose. */
async function scene(options: Partial<HubStandInOptions> = {}) {
  const model = await writeFakeModel();
  const cacheDir = await Deno.makeTempDir({ prefix: "svc-hub-cache-" });
  const hub = startHubStandIn({ repos: { [REPO]: model }, ...options });
  return {
    model,
    cacheDir,
    hub,
    async [Symbol.asyncDispose]() {
      await hub.close();
      await Deno.remove(model, { recursive: true });
      await Deno.remove(cacheDir, { recursive: true });
    },
  };
}

async function assertSameFiles(from: string, to: string, files: string[]): Promise<void> {
  for (const f of files) {
    const a = await Deno.readFile(join(from, f));
    const b = await Deno.readFile(join(to, f));
    assert(a.length === b.length && a.every((v, i) => v === b[i]), `${f} differs`);
  }
}

Deno.test("downloadModel() fetches the fp32 files into snapshots/<sha> and records refs/main", async () => {
  await using s = await scene();
  const model = await downloadModel(REPO, {
    dtype: "fp32",
    cacheDir: s.cacheDir,
    endpoint: s.hub.endpoint,
  });
  const sha = await s.hub.commitOf(REPO);
  const repoDir = join(s.cacheDir, "models--demo-org--fake-model");
  assertEquals(model.path, join(repoDir, "snapshots", sha));
  assertEquals(model.commit, sha);
  assertEquals(model.files.toSorted(), FP32_FILES.toSorted());
  assertEquals((await Deno.readTextFile(join(repoDir, "refs", "main"))).trim(), sha);
  await assertSameFiles(s.model, model.path, FP32_FILES);
  for (const other of ["README.md", "onnx/model_q4.onnx", "onnx/model_quantized.onnx"]) {
    assert(!(await exists(join(model.path, other))), `${other} should not be fetched`);
  }
  assertEquals(model.fromCache, false);
  // Files are fetched by commit sha, so a branch moving mid-download cannot mix versions.
  assert(
    s.hub.requests.filter((r) => r.path.includes("/resolve/")).every((r) =>
      r.path.includes(`/resolve/${sha}/`)
    ),
  );
});

Deno.test("downloadModel() fetches the ONNX file and external data of the dtype", async () => {
  await using s = await scene();
  const q8 = await downloadModel(REPO, {
    cacheDir: s.cacheDir,
    endpoint: s.hub.endpoint,
    dtype: "q8",
  });
  assert(q8.files.includes("onnx/model_quantized.onnx") && !q8.files.includes("onnx/model.onnx"));
  const fp16 = await downloadModel(REPO, {
    cacheDir: s.cacheDir,
    endpoint: s.hub.endpoint,
    dtype: "fp16",
  });
  assert(fp16.files.includes("onnx/model_fp16.onnx"));
  assert(fp16.files.includes("onnx/model_fp16.onnx_data"));
  await assertSameFiles(s.model, fp16.path, ["onnx/model_fp16.onnx_data"]);
  // The configs were cached by the q8 call: only the fp16 files were fetched.
  assertEquals(fp16.bytesFetched, 50_000 + 250_000);
});

Deno.test("downloadModel() with a dtype the repo lacks names the dtypes it has", async () => {
  await using s = await scene();
  const err = await assertRejects(
    () => downloadModel(REPO, { cacheDir: s.cacheDir, endpoint: s.hub.endpoint, dtype: "bnb4" }),
    NotFoundError,
    "onnx/model_bnb4.onnx",
  );
  assertMatch(err.message, /fp32, fp16, q8, q4/);
});

Deno.test("downloadModel() a second time fetches only the listing", async () => {
  await using s = await scene();
  await downloadModel(REPO, { dtype: "fp32", cacheDir: s.cacheDir, endpoint: s.hub.endpoint });
  const before = s.hub.requests.length;
  const again = await downloadModel(REPO, {
    dtype: "fp32",
    cacheDir: s.cacheDir,
    endpoint: s.hub.endpoint,
  });
  assertEquals(s.hub.requests.slice(before).map((r) => r.path), [
    `/api/models/${REPO}/revision/main`,
  ]);
  assertEquals([again.fromCache, again.bytesFetched], [true, 0]);
});

Deno.test("downloadModel() with force fetches every file again", async () => {
  await using s = await scene();
  await downloadModel(REPO, { dtype: "fp32", cacheDir: s.cacheDir, endpoint: s.hub.endpoint });
  const again = await downloadModel(REPO, {
    dtype: "fp32",
    cacheDir: s.cacheDir,
    endpoint: s.hub.endpoint,
    force: true,
  });
  assertEquals(again.fromCache, false);
  assert(again.bytesFetched > 300_000);
});

Deno.test("downloadModel() uses the mirror endpoint when given one", async () => {
  await using s = await scene();
  await using mirror = startHubStandIn({ repos: { [REPO]: s.model }, redirectLfs: true });
  const model = await downloadModel(REPO, {
    dtype: "fp32",
    cacheDir: s.cacheDir,
    endpoint: mirror.endpoint + "/",
  });
  assertEquals(s.hub.requests.length, 0);
  assert(mirror.requests.some((r) => r.path.startsWith("/_cdn/")), "LFS redirect followed");
  await assertSameFiles(s.model, model.path, FP32_FILES);
});

Deno.test("downloadModel() of a private model fails without HUB_TOKEN and works with it", async () => {
  await using s = await scene({ token: "hf_secret", redirectLfs: true });
  const err = await assertRejects(
    () => downloadModel(REPO, { dtype: "fp32", cacheDir: s.cacheDir, endpoint: s.hub.endpoint }),
    AuthenticationError,
    "HUB_TOKEN",
  );
  assertMatch(err.message, /private or gated/);
  await assertRejects(
    () =>
      downloadModel(REPO, {
        dtype: "fp32",
        cacheDir: s.cacheDir,
        endpoint: s.hub.endpoint,
        token: "wrong",
      }),
    AuthenticationError,
    "refused",
  );
  const model = await downloadModel(REPO, {
    dtype: "fp32",
    cacheDir: s.cacheDir,
    endpoint: s.hub.endpoint,
    token: "hf_secret",
  });
  await assertSameFiles(s.model, model.path, FP32_FILES);
  const hubRequests = s.hub.requests.filter((r) => !r.path.startsWith("/_cdn/") && r.status < 400);
  assert(hubRequests.every((r) => r.authorization === "Bearer hf_secret"));
});

Deno.test("downloadModel() of an unknown repo or revision is a NotFoundError naming it", async () => {
  await using s = await scene();
  await assertRejects(
    () =>
      downloadModel("demo-org/no-such-model", {
        dtype: "fp32",
        cacheDir: s.cacheDir,
        endpoint: s.hub.endpoint,
      }),
    NotFoundError,
    `"demo-org/no-such-model"`,
  );
  await assertRejects(
    () =>
      downloadModel(REPO, {
        dtype: "fp32",
        cacheDir: s.cacheDir,
        endpoint: s.hub.endpoint,
        revision: "v9",
      }),
    NotFoundError,
    `revision "v9"`,
  );
});

Deno.test("downloadModel() resumes a file cut mid-way with a Range request", async () => {
  await using s = await scene({ cutAfterBytes: 100_000, cutPath: "onnx/model.onnx" });
  const sha = await s.hub.commitOf(REPO);
  const dest = join(
    s.cacheDir,
    "models--demo-org--fake-model",
    "snapshots",
    sha,
    "onnx/model.onnx",
  );
  const err = await assertRejects(
    () =>
      downloadModel(REPO, {
        dtype: "fp32",
        cacheDir: s.cacheDir,
        endpoint: s.hub.endpoint,
        retries: 0,
      }),
    ServiceError,
    s.hub.endpoint,
  );
  assertMatch(err.message, /after 100000 bytes of "onnx\/model.onnx"/);
  assert(!(await exists(dest)), "a partial file must never be at the final path");
  assertEquals((await Deno.stat(dest + ".incomplete")).size, 100_000);
  // The refs are only written once the snapshot is complete.
  assert(!(await exists(join(s.cacheDir, "models--demo-org--fake-model", "refs", "main"))));

  const model = await downloadModel(REPO, {
    dtype: "fp32",
    cacheDir: s.cacheDir,
    endpoint: s.hub.endpoint,
  });
  const resumed = s.hub.requests.filter((r) => r.path.endsWith("/onnx/model.onnx"));
  assertEquals(resumed.map((r) => [r.range, r.status]), [[null, 200], ["bytes=100000-", 206]]);
  await assertSameFiles(s.model, model.path, ["onnx/model.onnx"]);
  assertEquals(model.bytesFetched, 200_000);
  assert(!(await exists(dest + ".incomplete")));
});

Deno.test("downloadModel() retries cuts within one call, resuming each time", async () => {
  await using s = await scene({
    cutAfterBytes: 70_000,
    cutRequests: 3,
    cutPath: "onnx/model.onnx",
  });
  const model = await downloadModel(REPO, {
    dtype: "fp32",
    cacheDir: s.cacheDir,
    endpoint: s.hub.endpoint,
    ...FAST,
  });
  const ranges = s.hub.requests.filter((r) => r.path.endsWith("/onnx/model.onnx")).map((r) =>
    r.range
  );
  assertEquals(ranges, [null, "bytes=70000-", "bytes=140000-", "bytes=210000-"]);
  await assertSameFiles(s.model, model.path, ["onnx/model.onnx"]);
});

Deno.test("downloadModel() restarts from byte 0 when the server ignores Range", async () => {
  await using s = await scene({ cutAfterBytes: 100_000, cutPath: "onnx/model.onnx" });
  await assertRejects(
    () =>
      downloadModel(REPO, {
        dtype: "fp32",
        cacheDir: s.cacheDir,
        endpoint: s.hub.endpoint,
        retries: 0,
      }),
    ServiceError,
  );
  s.hub.setFaults({ ignoreRange: true });
  const events: HubProgressEvent[] = [];
  const model = await downloadModel(REPO, {
    dtype: "fp32",
    cacheDir: s.cacheDir,
    endpoint: s.hub.endpoint,
    ...FAST,
    onProgress: (e) => events.push(e),
  });
  await assertSameFiles(s.model, model.path, ["onnx/model.onnx"]);
  assertEquals(model.bytesFetched, 300_000);
  const onnx = s.hub.requests.filter((r) => r.path.endsWith("/onnx/model.onnx")).at(-1)!;
  assertEquals([onnx.range, onnx.status], ["bytes=100000-", 200]);
  const done = events.map((e) => e.bytesDone);
  assert(done.every((v, i) => i === 0 || v >= done[i - 1]), "bytesDone never decreases");
});

Deno.test("downloadModel() replaces a corrupt partial file that fails the sha256 check", async () => {
  await using s = await scene();
  const sha = await s.hub.commitOf(REPO);
  const dest = join(
    s.cacheDir,
    "models--demo-org--fake-model",
    "snapshots",
    sha,
    "onnx/model.onnx",
  );
  await Deno.mkdir(join(dest, ".."), { recursive: true });
  await Deno.writeFile(dest + ".incomplete", new Uint8Array(300_000)); // right size, wrong bytes
  const model = await downloadModel(REPO, {
    dtype: "fp32",
    cacheDir: s.cacheDir,
    endpoint: s.hub.endpoint,
    ...FAST,
  });
  await assertSameFiles(s.model, model.path, ["onnx/model.onnx"]);
  const onnx = s.hub.requests.filter((r) => r.path.endsWith("/onnx/model.onnx"));
  assertEquals(onnx.map((r) => [r.range, r.status]), [[null, 200]]); // from 0 after the check failed
});

Deno.test("downloadModel() retries 5xx answers and then names the endpoint", async () => {
  await using s = await scene({ failRequests: 2 });
  await downloadModel(REPO, {
    dtype: "fp32",
    cacheDir: s.cacheDir,
    endpoint: s.hub.endpoint,
    ...FAST,
  });
  assertEquals(s.hub.requests.slice(0, 3).map((r) => r.status), [503, 503, 200]);
  s.hub.setFaults({ failRequests: 100 });
  const err = await assertRejects(
    () =>
      downloadModel(REPO, {
        dtype: "fp32",
        cacheDir: s.cacheDir,
        endpoint: s.hub.endpoint,
        force: true,
        ...FAST,
      }),
    ServiceError,
    s.hub.endpoint,
  );
  assertMatch(err.message, /HTTP 503/);
});

Deno.test("downloadModel() offline uses the cache and never touches the network", async () => {
  await using s = await scene();
  const online = await downloadModel(REPO, {
    dtype: "fp32",
    cacheDir: s.cacheDir,
    endpoint: s.hub.endpoint,
  });
  const before = s.hub.requests.length;
  const offline = await downloadModel(REPO, {
    dtype: "fp32",
    cacheDir: s.cacheDir,
    endpoint: s.hub.endpoint,
    offline: true,
  });
  assertEquals(s.hub.requests.length, before);
  assertEquals(offline.path, online.path);
  assertEquals(offline.files.toSorted(), online.files.toSorted());
  assertEquals([offline.fromCache, offline.commit], [true, online.commit]);
});

Deno.test("downloadModel() offline without a cached copy says how to download it", async () => {
  await using s = await scene();
  const err = await assertRejects(
    () => downloadModel(REPO, { dtype: "fp32", cacheDir: s.cacheDir, offline: true }),
    NotFoundError,
    `"${REPO}"`,
  );
  assertMatch(err.message, /offline mode is on: download it once .*svc llm model download/);
  await downloadModel(REPO, { dtype: "fp32", cacheDir: s.cacheDir, endpoint: s.hub.endpoint });
  await assertRejects(
    () => downloadModel(REPO, { cacheDir: s.cacheDir, offline: true, dtype: "q8" }),
    NotFoundError,
    "onnx/model_quantized.onnx",
  );
});

Deno.test("downloadModel() falls back to the cache with a warning when the hub is unreachable", async () => {
  await using s = await scene();
  await downloadModel(REPO, { dtype: "fp32", cacheDir: s.cacheDir, endpoint: s.hub.endpoint });
  const gone = s.hub.endpoint;
  await s.hub.close();
  const model = await downloadModel(REPO, {
    dtype: "fp32",
    cacheDir: s.cacheDir,
    endpoint: gone,
    ...FAST,
  });
  assertEquals(model.fromCache, true);
  assertMatch(model.warning ?? "", /could not reach the model hub at .*using the cached copy/);
  const empty = await Deno.makeTempDir();
  try {
    await assertRejects(
      () => downloadModel(REPO, { dtype: "fp32", cacheDir: empty, endpoint: gone, ...FAST }),
      ServiceError,
      gone,
    );
  } finally {
    await Deno.remove(empty, { recursive: true });
  }
});

Deno.test("downloadModel() progress events are monotonic and their totals match", async () => {
  await using s = await scene({ chunkSize: 16 * 1024, chunkDelayMs: 2 });
  const events: HubProgressEvent[] = [];
  let partialSeenAtFinalPath = false;
  const model = await downloadModel(REPO, {
    dtype: "fp32",
    cacheDir: s.cacheDir,
    endpoint: s.hub.endpoint,
    ...FAST,
    onProgress: (e) => {
      events.push(e);
      if (e.kind === "file_progress" && e.fileBytes < (e.fileTotal ?? 0)) {
        const dest = join(s.cacheDir, "models--demo-org--fake-model", "snapshots");
        partialSeenAtFinalPath ||= Deno.readDirSync(dest).some((d) => {
          try {
            return Deno.statSync(join(dest, d.name, e.file)).isFile;
          } catch {
            return false;
          }
        });
      }
    },
  });
  assert(!partialSeenAtFinalPath, "a partial file was at the final path");
  let total = 0;
  for (const f of model.files) total += (await Deno.stat(join(model.path, f))).size;
  assertEquals(events[0].kind, "start");
  assertEquals(events.at(-1)!.kind, "done");
  assert(events.every((e) => e.bytesTotal === total && e.filesTotal === model.files.length));
  assertEquals([events.at(-1)!.bytesDone, events.at(-1)!.filesDone], [total, model.files.length]);
  for (let i = 1; i < events.length; i++) {
    assert(events[i].bytesDone >= events[i - 1].bytesDone, `bytesDone went back at ${i}`);
    assert(events[i].filesDone >= events[i - 1].filesDone, `filesDone went back at ${i}`);
  }
  const onnx = events.filter((e) => "file" in e && e.file === "onnx/model.onnx");
  assertEquals(onnx[0].kind, "file_start");
  assertEquals(onnx.at(-1)!.kind, "file_done");
  assert(onnx.filter((e) => e.kind === "file_progress").length >= 5, "per-chunk progress");
  const onnxBytes = onnx.map((e) => "fileBytes" in e ? e.fileBytes : -1);
  assert(onnxBytes.every((v, i) => i === 0 || v >= onnxBytes[i - 1]), "fileBytes never decreases");
  assertEquals(events.filter((e) => e.kind === "file_done").length, model.files.length);
});

/** Downloads the fp32 files, aborted at the first progress event `abortAt` picks: cancelled. */
async function assertCancelledDownload(
  s: Awaited<ReturnType<typeof scene>>,
  abortAt: (e: HubProgressEvent) => boolean,
): Promise<void> {
  const abort = new AbortController();
  await assertRejects(
    () =>
      downloadModel(REPO, {
        dtype: "fp32",
        cacheDir: s.cacheDir,
        endpoint: s.hub.endpoint,
        ...FAST,
        signal: abort.signal,
        onProgress: (e) => {
          if (abortAt(e)) abort.abort();
        },
      }),
    CancelledError,
  );
}

Deno.test("downloadModel() stops on abort and resumes the partial file next time", async () => {
  await using s = await scene({ chunkSize: 16 * 1024, chunkDelayMs: 2 });
  await assertCancelledDownload(
    s,
    (e) => e.kind === "file_progress" && e.file === "onnx/model.onnx" && e.fileBytes > 50_000,
  );
  const events: HubProgressEvent[] = [];
  const model = await downloadModel(REPO, {
    dtype: "fp32",
    cacheDir: s.cacheDir,
    endpoint: s.hub.endpoint,
    onProgress: (e) => events.push(e),
  });
  const start = events.find((e) => e.kind === "file_start" && e.file === "onnx/model.onnx");
  assert(start && "fileBytes" in start && start.fileBytes > 50_000, "resumed, not restarted");
  await assertSameFiles(s.model, model.path, ["onnx/model.onnx"]);
});

Deno.test("downloadModel() aborted during its last file's only chunk is cancelled, not finished", async () => {
  // One chunk per file: the body may be whole before the abort.
  await using s = await scene({ chunkSize: 1 << 20 });
  const started: string[] = [];
  await assertCancelledDownload(s, (e) => {
    if (e.kind === "file_start") started.push(e.file);
    return e.kind === "file_progress" && e.file === "onnx/model.onnx";
  });
  assertEquals(started.at(-1), "onnx/model.onnx", "the last file");
});

Deno.test({
  name: "downloadModel() without --allow-net for the hub names the flag to add",
  permissions: { read: true, write: true, net: false },
  async fn() {
    const cacheDir = await Deno.makeTempDir();
    try {
      await assertRejects(
        () => downloadModel(REPO, { dtype: "fp32", cacheDir, endpoint: "http://127.0.0.1:9" }),
        ConfigurationError,
        "--allow-net=127.0.0.1:9",
      );
    } finally {
      await Deno.remove(cacheDir, { recursive: true });
    }
  },
});

Deno.test("downloadModel() gives up on a stalled body and keeps what arrived for a resume", async () => {
  // The limit covers the hub's first answers too: long enough for them on a loaded machine (100 ms
  // was not), and well below the stall.
  await using s = await scene({ chunkSize: 16 * 1024, chunkDelayMs: 4000 });
  const err = await assertRejects(
    () =>
      downloadModel(REPO, {
        dtype: "fp32",
        cacheDir: s.cacheDir,
        endpoint: s.hub.endpoint,
        timeoutMs: 1000,
        retries: 0,
      }),
    ServiceError,
    "no data for 1000 ms",
  );
  assertMatch(err.message, /after 16384 bytes of "tokenizer.json".*resumes from there/);
  const snapshot = join(
    s.cacheDir,
    "models--demo-org--fake-model",
    "snapshots",
    await s.hub.commitOf(REPO),
  );
  assertEquals((await Deno.stat(join(snapshot, "tokenizer.json.incomplete"))).size, 16384);
  assert(!(await exists(join(snapshot, "tokenizer.json"))));
});

Deno.test("downloadModel() with no dtype named fetches the device's best the repo has", async () => {
  await using s = await scene();
  const cpu = await downloadModel(REPO, { cacheDir: s.cacheDir, endpoint: s.hub.endpoint });
  assertEquals([cpu.dtype, cpu.modelFileName], ["q8", "model"]);
  assert(cpu.files.includes("onnx/model_quantized.onnx"));
  assert(!cpu.files.some((f) => f.startsWith("onnx/") && f !== "onnx/model_quantized.onnx"));
  const webgpu = await downloadModel(REPO, {
    cacheDir: s.cacheDir,
    endpoint: s.hub.endpoint,
    device: "webgpu",
  });
  assertEquals(webgpu.dtype, "fp16");
  assert(webgpu.files.includes("onnx/model_fp16.onnx_data"));
});

Deno.test("downloadModel() offline with no dtype named takes a dtype the cache has", async () => {
  await using s = await scene();
  await downloadModel(REPO, { cacheDir: s.cacheDir, endpoint: s.hub.endpoint, dtype: "q4" });
  const offline = await downloadModel(REPO, { cacheDir: s.cacheDir, offline: true });
  assertEquals([offline.dtype, offline.fromCache], ["q4", true]);
});

/** A merged-decoder repository (no `onnx/model*.onnx`) with external data in both spellings. */
async function mergedDecoderFolder(): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "svc-fake-merged-" });
  const files: Record<string, number> = {
    "config.json": 0,
    "tokenizer.json": 1_000,
    "tokenizer_config.json": 0,
    "onnx/decoder_model_merged.onnx": 5_000,
    "onnx/decoder_model_merged.onnx.data": 7_000,
    "onnx/decoder_model_merged_q4f16.onnx": 3_000,
    "onnx/decoder_model_merged_q4f16.onnx_data": 4_000,
    "onnx/decoder_model_merged_q4f16.onnx_data_1": 2_000,
    "onnx/decoder_model.onnx": 6_000,
  };
  let i = 0;
  for (const [path, size] of Object.entries(files)) {
    await Deno.mkdir(join(dir, dirname(path)), { recursive: true });
    await Deno.writeFile(
      join(dir, path),
      size === 0 ? new TextEncoder().encode(JSON.stringify({ path })) : fakeBytes(size, ++i),
    );
  }
  return dir;
}

Deno.test("downloadModel() fetches merged-decoder repos with their external data", async () => {
  const folder = await mergedDecoderFolder();
  await using s = await scene({ repos: { "org/merged": folder } });
  try {
    const fp32 = await downloadModel("org/merged", {
      cacheDir: s.cacheDir,
      endpoint: s.hub.endpoint,
    });
    assertEquals([fp32.dtype, fp32.modelFileName], ["fp32", "decoder_model_merged"]);
    assertEquals(fp32.files.filter((f) => f.startsWith("onnx/")).toSorted(), [
      "onnx/decoder_model_merged.onnx",
      "onnx/decoder_model_merged.onnx.data",
    ]);
    const q4f16 = await downloadModel("org/merged", {
      cacheDir: s.cacheDir,
      endpoint: s.hub.endpoint,
      dtype: "q4f16",
    });
    assertEquals(q4f16.files.filter((f) => f.startsWith("onnx/")).toSorted(), [
      "onnx/decoder_model_merged_q4f16.onnx",
      "onnx/decoder_model_merged_q4f16.onnx_data",
      "onnx/decoder_model_merged_q4f16.onnx_data_1",
    ]);
    await assertSameFiles(folder, q4f16.path, q4f16.files);
    const err = await assertRejects(
      () =>
        downloadModel("org/merged", {
          cacheDir: s.cacheDir,
          endpoint: s.hub.endpoint,
          dtype: "q8",
        }),
      NotFoundError,
      "onnx/decoder_model_merged_quantized.onnx",
    );
    assertMatch(err.message, /it has fp32, q4f16/);
  } finally {
    await Deno.remove(folder, { recursive: true });
  }
});
