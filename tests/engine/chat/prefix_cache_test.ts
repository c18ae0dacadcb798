import { assert, assertEquals } from "../../_assert.ts";
import {
  DEFAULT_PREFIX_CACHE_BYTES,
  defaultPrefixCacheBytes,
  PrefixCache,
} from "../../../src/engine/chat/prefix_cache.ts";
import { loadModel } from "../../../src/engine/load_model.ts";
import type { CacheTensor } from "../../../src/engine/chat/kv_cache.ts";
import type { DeviceCacheCopies } from "../../../src/engine/onnx_session.ts";
import { demoChatEngine, demoFolder } from "../../_helpers/demo_engines.ts";
import { ChatEngine, collect } from "../../../src/engine/chat/chat_engine.ts";
import type { GenerationEvent, SamplingParams } from "../../../src/core/inference_types.ts";

const HEADS = 2;
const HEAD_DIM = 3;

/** Two cache tensors `[rows, HEADS, width, HEAD_DIM]` whose values name row, head, column. */
function tensors(rows: number, width: number, half = false): CacheTensor[] {
  return [0, 1].map((layer) => {
    const n = rows * HEADS * width * HEAD_DIM;
    const data = half ? new Uint16Array(n) : new Float32Array(n);
    for (let i = 0; i < n; i++) {
      const d = i % HEAD_DIM;
      const col = Math.floor(i / HEAD_DIM) % width;
      const head = Math.floor(i / (HEAD_DIM * width)) % HEADS;
      const row = Math.floor(i / (HEAD_DIM * width * HEADS));
      data[i] = layer * 10000 + row * 1000 + head * 100 + col + d / 10;
    }
    return { data, dims: [rows, HEADS, width, HEAD_DIM] as const };
  });
}

/** Column `col` of head `head` in a batch-1 cache tensor. */
function column(t: CacheTensor, head: number, col: number): number[] {
  const at = (head * t.dims[2] + col) * HEAD_DIM;
  return [...t.data.subarray(at, at + HEAD_DIM)];
}

const ids = (n: number, from = 0) => Array.from({ length: n }, (_, i) => from + i);

Deno.test("PrefixCache finds the longest cached prefix to the token, columns in order", () => {
  const cache = new PrefixCache(1 << 20, 4);
  const layers = tensors(2, 12);
  // Row 1's 10 tokens are its last 10 columns (left padding of 2): blocks of 4, 4 and 2.
  cache.insert(ids(10), { layers, row: 1, start: 2 });
  assertEquals(cache.stats().blocks, 3);

  const hit = cache.lookup([...ids(9), 99], 9)!;
  assertEquals(hit.tokens, 9, "two whole blocks and one token of the short one");
  assertEquals(hit.cache[1].dims, [1, HEADS, 9, HEAD_DIM]);
  for (const col of [0, 3, 4, 7, 8]) {
    // Layer 1, row 1, head 1, source column col + 2 (after the padding).
    const want = [0, 1, 2].map((d) => Math.fround(11100 + col + 2 + d / 10));
    assertEquals(column(hit.cache[1], 1, col), want, `column ${col}`);
  }
  assertEquals(cache.lookup([...ids(7), 99], 99)?.tokens, 7, "a divergence inside block 2");
  assertEquals(cache.lookup(ids(10), 6)?.tokens, 6, "at most `most` tokens");
  assertEquals(cache.lookup([5, ...ids(9)], 10), null, "a different first token");
  const stats = cache.stats();
  assertEquals([stats.lookups, stats.hits, stats.hitTokens], [4, 3, 22]);
});

Deno.test("PrefixCache drops a short last block once a longer one begins with it", () => {
  const cache = new PrefixCache(1 << 20, 4);
  const layers = tensors(1, 8);
  cache.insert(ids(6), { layers, row: 0, start: 0 });
  assertEquals(cache.stats().blocks, 2);
  cache.insert(ids(5), { layers, row: 0, start: 0 }); // already covered: nothing new
  assertEquals(cache.stats().blocks, 2);
  cache.insert(ids(8), { layers, row: 0, start: 0 });
  assertEquals(cache.stats().blocks, 2, "[4, 5] gave way to [4, 5, 6, 7]");
  assertEquals(cache.stats().bytes, 2 * 2 * HEADS * 4 * HEAD_DIM * 4);
  assertEquals(cache.lookup([...ids(7), 50], 8)?.tokens, 7);
});

Deno.test("PrefixCache keeps float16 caches as raw bits", () => {
  const cache = new PrefixCache(1 << 20, 4);
  const layers = tensors(1, 4, true);
  cache.insert(ids(4), { layers, row: 0, start: 0 });
  const hit = cache.lookup(ids(5), 4)!;
  assert(hit.cache[0].data instanceof Uint16Array);
  assertEquals([...hit.cache[0].data], [...layers[0].data]);
});

Deno.test("PrefixCache stores a shared prefix once and evicts least recently used leaves first", () => {
  const blockBytes = 2 * HEADS * 4 * HEAD_DIM * 4; // two tensors, 4 tokens, float32
  const cache = new PrefixCache(blockBytes * 4, 4);
  const layers = tensors(1, 8);
  const shared = ids(4);
  cache.insert([...shared, 10, 11, 12, 13], { layers, row: 0, start: 0 });
  cache.insert([...shared, 20, 21, 22, 23], { layers, row: 0, start: 0 });
  assertEquals(cache.stats().blocks, 3, "the shared block once, two leaves");
  cache.lookup([...shared, 10, 11, 12, 13], 8); // the first leaf is used again
  cache.insert([...shared, 30, 31, 32, 33], { layers, row: 0, start: 0 });
  cache.insert([...shared, 40, 41, 42, 43], { layers, row: 0, start: 0 });
  const stats = cache.stats();
  assertEquals(stats.blocks, 4);
  assertEquals(stats.bytes, blockBytes * 4);
  assertEquals(stats.evictions, 1);
  assertEquals(cache.lookup([...shared, 20, 21, 22, 23], 8)?.tokens, 4, "the idle leaf went");
  assertEquals(cache.lookup([...shared, 10, 11, 12, 13], 8)?.tokens, 8, "the used one stayed");
  assertEquals(cache.lookup([...shared, 40, 41, 42, 43], 8)?.tokens, 8);
});

/**
 * Copies "on the GPU" that record what the prefix cache asks of them (the real ones are
 * tests/engine/gpu_cache_reuse_test.ts'): a block's values are the columns it was sliced from.
 */
function recordingCopies(onGpu: (data: CacheTensor["data"]) => boolean = () => true) {
  /** Blocks not destroyed yet: per tensor, per head, the values. */
  const live = new Set<{ count: number; values: number[][][] }>();
  const fed: { twin: CacheTensor; values: number[] }[] = [];
  const copies: DeviceCacheCopies = {
    slice(sources, row, start, count) {
      if (!sources.every((t) => onGpu(t.data))) return null;
      const values = sources.map(({ data, dims: [, heads, width, headDim] }) =>
        Array.from({ length: heads }, (_, h) => {
          const at = ((row * heads + h) * width + start) * headDim;
          return [...data.subarray(at, at + count * headDim)];
        })
      );
      const block = { count, values, destroy: () => void live.delete(block) };
      live.add(block);
      return block;
    },
    concat(parts, layer, twin) {
      const [, heads, , headDim] = twin.dims;
      const values = Array.from(
        { length: heads },
        (_, h) =>
          parts.flatMap(({ block, count }) =>
            (block as unknown as { values: number[][][] }).values[layer][h].slice(
              0,
              count * headDim,
            )
          ),
      ).flat();
      fed.push({ twin: twin as CacheTensor, values });
    },
  };
  return { copies, live, fed };
}

Deno.test("PrefixCache keeps its blocks on the GPU too and puts a hit together there", () => {
  const blockBytes = 2 * HEADS * 4 * HEAD_DIM * 4;
  const { copies, live, fed } = recordingCopies();
  const cache = new PrefixCache(blockBytes * 3, 4, copies);
  const layers = tensors(2, 12);
  cache.insert(ids(10), { layers, row: 1, start: 2 });
  assertEquals(live.size, 3, "three blocks");
  const hit = cache.lookup([...ids(9), 99], 9)!;
  assertEquals(fed.length, 2, "one GPU tensor per cache tensor");
  fed.forEach(({ twin, values }, layer) => {
    assert(twin === hit.cache[layer], "fed in place of the hit's own array");
    assertEquals(values, [...hit.cache[layer].data], "the same values as in memory");
  });
  // A longer last block takes the short one's place (evicted for room), then a new root evicts
  // the least recently used leaf: each time the dropped block's copies are freed.
  cache.insert(ids(12), { layers, row: 1, start: 0 });
  assertEquals([cache.stats().evictions, live.size], [1, 3]);
  cache.insert([50, 51, 52, 53], { layers, row: 0, start: 0 });
  assertEquals([cache.stats().evictions, live.size], [2, 3]);
});

Deno.test("PrefixCache feeds a hit from memory when one of its blocks is not on the GPU", () => {
  let gpu = true;
  const { copies, live, fed } = recordingCopies(() => gpu);
  const cache = new PrefixCache(1 << 20, 4, copies);
  cache.insert(ids(4), { layers: tensors(1, 4), row: 0, start: 0 });
  gpu = false; // the next block's cache has left the GPU
  cache.insert(ids(8), { layers: tensors(1, 8), row: 0, start: 0 });
  assertEquals(live.size, 1, "the first block only");
  assertEquals(cache.lookup(ids(9), 8)?.tokens, 8);
  assertEquals(fed.length, 0);
  assertEquals(cache.lookup(ids(9), 4)?.tokens, 4);
  assertEquals(fed.length, 2, "the first block alone is all on the GPU");
});

Deno.test("PrefixCache with a budget of 0 keeps nothing", () => {
  const cache = new PrefixCache(0, 4);
  cache.insert(ids(8), { layers: tensors(1, 8), row: 0, start: 0 });
  assertEquals(cache.stats().blocks, 0);
  assertEquals(cache.lookup(ids(8), 8), null);
});

// ---- The oracle: with the prefix cache on, greedy output equals the cache-off output. ----

const GREEDY: SamplingParams = { temperature: 0, maxTokens: 24 };
const SYSTEM = Array.from({ length: 70 }, (_, i) => 30 + ((i * 7) % 200));

async function generate(engine: ChatEngine, tokenIds: number[], params = GREEDY) {
  const stream = await engine.generate({ tokenIds }, params);
  let cached = -1;
  const events: GenerationEvent[] = [];
  for await (const event of stream) {
    events.push(event);
    if (event.type === "finish") cached = event.usage.cachedTokens ?? 0;
  }
  const result = await collect((async function* () {
    yield* events;
  })());
  return { ...result, cached };
}

Deno.test("ChatEngine with the prefix cache generates what it generates without, turn after turn", async () => {
  const on = await demoChatEngine();
  const off = await demoChatEngine({ scheduler: { prefixCacheBytes: 0 } });
  try {
    let conversation = [...SYSTEM];
    for (let turn = 0; turn < 4; turn++) {
      conversation = [...conversation, 40 + turn, 41 + turn, 42 + turn];
      const want = await generate(off, conversation);
      const got = await generate(on, conversation);
      assertEquals(got.text, want.text, `turn ${turn + 1}`);
      assertEquals(want.cached, 0);
      if (turn > 0) {
        assert(got.cached >= SYSTEM.length - 16, `turn ${turn + 1} reused ${got.cached} tokens`);
      }
      // The next turn repeats this one's answer (as token ids, as a chat template would).
      conversation = [
        ...conversation,
        ...(await on.tokenize({ prompt: got.text, addSpecialTokens: false })).tokens,
      ];
    }
    const stats = on.stats().prefixCache!;
    assertEquals(stats.lookups, 4);
    assertEquals(stats.hits, 3);
    assert(stats.bytes > 0 && stats.blocks > 0);
    assertEquals(off.stats().prefixCache, undefined, "0 bytes switches it off");
  } finally {
    await on.dispose();
    await off.dispose();
  }
});

Deno.test("ChatEngine prefix cache hits batched together, and one arriving while others decode in chunks, equal cache-off", async () => {
  const on = await demoChatEngine({ scheduler: { prefillChunk: 8 } });
  const off = await demoChatEngine({ scheduler: { prefixCacheBytes: 0 } });
  try {
    const users = [1, 2, 3, 4].map((
      u,
    ) => [...SYSTEM, ...Array.from({ length: 5 * u }, (_, i) => 60 + u + i)]);
    const want = [];
    for (const prompt of users) want.push((await generate(off, prompt)).text);
    await generate(on, SYSTEM); // fills the cache with the shared prefix
    const got = await Promise.all(users.map((prompt) => generate(on, prompt)));
    assertEquals(got.map((g) => g.text), want);
    for (const g of got) assert(g.cached >= SYSTEM.length, `reused ${g.cached}`);

    // A long suffix after a hit, while a stream decodes: prefilled in chunks of 8.
    const running = generate(on, [7, 8, 9], { ...GREEDY, maxTokens: 40 });
    const long = [...SYSTEM, ...Array.from({ length: 45 }, (_, i) => 100 + i)];
    const [late, wantLate] = [await generate(on, long), await generate(off, long)];
    assertEquals(late.text, wantLate.text);
    assertEquals(
      (await running).text,
      (await generate(off, [7, 8, 9], { ...GREEDY, maxTokens: 40 })).text,
    );
  } finally {
    await on.dispose();
    await off.dispose();
  }
});

Deno.test("ChatEngine with a prefix cache too small for everything evicts and still equals cache-off", async () => {
  // 80 tokens of demo/chat's cache (2 layers × key and value × 2 heads × 16 floats each): one
  // conversation's prompt fits, two do not, so each evicts another's blocks.
  const on = await demoChatEngine({ scheduler: { prefixCacheBytes: 80 * 2 * 2 * 2 * 16 * 4 } });
  const off = await demoChatEngine({ scheduler: { prefixCacheBytes: 0 } });
  try {
    for (let round = 0; round < 3; round++) {
      for (const u of [0, 1, 2]) {
        const prompt = [...Array.from({ length: 40 }, (_, i) => 30 + u * 50 + i), round + 5];
        assertEquals((await generate(on, prompt)).text, (await generate(off, prompt)).text);
      }
    }
    const stats = on.stats().prefixCache!;
    assert(stats.evictions > 0, JSON.stringify(stats));
    assert(stats.bytes <= stats.budgetBytes, JSON.stringify(stats));
  } finally {
    await on.dispose();
    await off.dispose();
  }
});

Deno.test("ChatEngine prefix cache hits under a JSON schema and with sampling equal cache-off", async () => {
  const on = await demoChatEngine();
  const off = await demoChatEngine({ scheduler: { prefixCacheBytes: 0 } });
  const schema = {
    type: "object",
    properties: { city: { type: "string", maxLength: 12 }, days: { type: "integer" } },
    required: ["city", "days"],
    additionalProperties: false,
  };
  const params: SamplingParams[] = [
    { temperature: 0, maxTokens: 60, responseFormat: { type: "json_schema", schema } },
    { temperature: 1, seed: 7, maxTokens: 24 },
  ];
  try {
    await generate(on, SYSTEM);
    for (const p of params) {
      const prompt = [...SYSTEM, 5, 6, 7];
      const got = await generate(on, prompt, p);
      assert(got.cached >= SYSTEM.length, `reused ${got.cached}`);
      assertEquals(got.text, (await generate(off, prompt, p)).text, JSON.stringify(p));
    }
  } finally {
    await on.dispose();
    await off.dispose();
  }
});

Deno.test("defaultPrefixCacheBytes() keeps 512 MiB on cpu and wasm, none on webgpu", () => {
  assertEquals(defaultPrefixCacheBytes("cpu"), DEFAULT_PREFIX_CACHE_BYTES);
  assertEquals(defaultPrefixCacheBytes("wasm"), DEFAULT_PREFIX_CACHE_BYTES);
  assertEquals(defaultPrefixCacheBytes("webgpu"), 0);
});

Deno.test("ChatEngine on a webgpu model has no prefix cache unless a budget is named", async () => {
  const model = await loadModel(await demoFolder("demo/chat"), "chat", {
    device: "cpu",
    dtype: "q8",
  });
  // The engine reads the device of the model it is given; the session itself runs on the CPU here.
  const webgpu = { ...model, device: "webgpu" as const };
  const plain = await ChatEngine.create(webgpu, { id: "plain" });
  const asked = await ChatEngine.create(webgpu, {
    id: "asked",
    scheduler: { prefixCacheBytes: 64 * 1024 * 1024 },
  });
  const onCpu = await ChatEngine.create(model, { id: "cpu" });
  try {
    assertEquals(plain.stats().prefixCache, undefined);
    assertEquals(asked.stats().prefixCache?.budgetBytes, 64 * 1024 * 1024);
    assertEquals(onCpu.stats().prefixCache?.budgetBytes, DEFAULT_PREFIX_CACHE_BYTES);
  } finally {
    // One session under three engines: release it once.
    await onCpu.dispose();
  }
});
