import * as ort from "onnxruntime-node";
import { assert, assertEquals } from "../../_assert.ts";
import {
  OnnxGraph,
  tensorFromArray,
  type TensorSource,
} from "../../../src/engine/generated_models/onnx_graph.ts";
import { ProtoWriter, TensorDataType } from "../../../src/engine/generated_models/onnx_proto.ts";
import { writeOnnxModel } from "../../../src/engine/generated_models/onnx_writer.ts";
import { uniformTensor, uniformValues } from "../../../src/engine/generated_models/weights.ts";

Deno.test("ProtoWriter encodes varints, negative int64 as ten bytes", () => {
  assertEquals([...new ProtoWriter().varint(300).finish()], [0xac, 0x02]);
  assertEquals([...new ProtoWriter().varint(-1).finish()], [...Array(9).fill(0xff), 0x01]);
  assertEquals([...new ProtoWriter().varint(2 ** 40).finish()], [128, 128, 128, 128, 128, 32]);
});

Deno.test("writeOnnxModel() writes a model ONNX Runtime runs, with streamed initializers", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const g = new OnnxGraph("probe");
    const x = g.input("x", TensorDataType.FLOAT, ["batch", 3]);
    // 3 x 200000 floats arrive in several chunks from the PRNG source.
    const spec = { seed: "probe:w", dims: [3, 200000], bound: 0.5 };
    const w = g.initializer("w", uniformTensor(spec));
    const y = g.node("MatMul", [x, w]);
    const summed = g.node("ReduceSum", [y, g.constInt64([-1])], { keepdims: 0 }, "sum");
    const scaled = g.node("Mul", [summed, g.constFloat([0.5], true)]);
    g.node("LeakyRelu", [scaled], { alpha: { float: 0.25 } }, "out");
    const idx = g.initializer(
      "idx",
      tensorFromArray(TensorDataType.INT64, [2], BigInt64Array.of(-1n, 0n)),
    );
    g.node("Gather", [g.node("Shape", [x]), idx], { axis: 0 }, "shape_picked");
    g.output("out", TensorDataType.FLOAT, ["batch"]);
    g.output("shape_picked", TensorDataType.INT64, [2]);
    const path = `${dir}/probe.onnx`;
    const size = await writeOnnxModel(path, g, { metadata: { note: "hello" } });
    assertEquals((await Deno.stat(path)).size, size);

    const session = await ort.InferenceSession.create(path);
    try {
      const input = Float32Array.of(1, 2, 3, -1, 0, 0.5);
      const res = await session.run({ x: new ort.Tensor("float32", input, [2, 3]) });
      const wv = uniformValues(spec);
      for (let b = 0; b < 2; b++) {
        let s = 0;
        for (let j = 0; j < 200000; j++) {
          for (let k = 0; k < 3; k++) s += input[b * 3 + k] * wv[k * 200000 + j];
        }
        const want = s * 0.5 >= 0 ? s * 0.5 : s * 0.5 * 0.25;
        const got = (res.out.data as Float32Array)[b];
        assert(Math.abs(got - want) < 1e-2 * Math.max(1, Math.abs(want)), `${got} vs ${want}`);
      }
      assertEquals([...(res.shape_picked.data as BigInt64Array)], [3n, 2n]);
    } finally {
      await session.release();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("writeOnnxModel() gives the event loop turns while its sources compute chunks", async () => {
  const dir = await Deno.makeTempDir();
  // 40 small chunks of 20 ms of work each: 800 ms in all, far below one file write's worth of
  // bytes. Without turns, timers (and Ctrl-C) waited for all of it.
  const busy: TensorSource = {
    dataType: TensorDataType.UINT8,
    dims: [40],
    byteLength: 40,
    *chunks() {
      for (let i = 0; i < 40; i++) {
        const until = performance.now() + 20;
        while (performance.now() < until) { /* computing */ }
        yield Uint8Array.of(i);
      }
    },
  };
  const g = new OnnxGraph("busy");
  const x = g.input("x", TensorDataType.UINT8, [40]);
  g.node("Add", [x, g.initializer("w", busy)], {}, "y");
  g.output("y", TensorDataType.UINT8, [40]);
  let last = performance.now();
  let longest = 0;
  const ticks = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
  }, 5);
  try {
    await writeOnnxModel(`${dir}/busy.onnx`, g);
    longest = Math.max(longest, performance.now() - last);
  } finally {
    clearInterval(ticks);
    await Deno.remove(dir, { recursive: true });
  }
  assert(longest < 300, `the event loop waited ${longest.toFixed(0)} ms for a turn`);
});
