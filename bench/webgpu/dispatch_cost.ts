/**
 * What Deno's WebGPU costs per call, without ONNX Runtime: tiny compute dispatches (a decode step
 * of the chat benchmark model issues on the order of a thousand), each in its own pass as
 * onnxruntime-web records them, with the same or a new bind group, with a small uniform write;
 * a submit per dispatch; and one read-back round trip (`mapAsync`), which every step pays for its
 * logits.
 *
 * Usage: deno run -A bench/webgpu/dispatch_cost.ts
 *
 * @module
 */

import { median } from "../_stats.ts";

const adapter = await navigator.gpu.requestAdapter();
if (!adapter) throw new Error("no WebGPU adapter");
const device = await adapter.requestDevice();
const module = device.createShaderModule({
  code: `
@group(0) @binding(0) var<storage, read_write> a: array<f32>;
@group(0) @binding(1) var<uniform> u: vec4<f32>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) id: vec3<u32>) {
  a[id.x] = a[id.x] + u.x;
}`,
});
const pipeline = device.createComputePipeline({
  layout: "auto",
  compute: { module, entryPoint: "main" },
});
const storage = device.createBuffer({
  size: 256,
  usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC,
});
const uniform = device.createBuffer({
  size: 16,
  usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST,
});
const bindGroup = () =>
  device.createBindGroup({
    layout: pipeline.getBindGroupLayout(0),
    entries: [{ binding: 0, resource: { buffer: storage } }, {
      binding: 1,
      resource: { buffer: uniform },
    }],
  });
const shared = bindGroup();
function dispatch(encoder: GPUCommandEncoder, group: GPUBindGroup): void {
  const pass = encoder.beginComputePass();
  pass.setPipeline(pipeline);
  pass.setBindGroup(0, group);
  pass.dispatchWorkgroups(1);
  pass.end();
}

const N = 2000;
const us = (ms: number, n: number) => (ms * 1000 / n).toFixed(1);
async function perDispatch(label: string, record: (encoder: GPUCommandEncoder) => void) {
  for (const measured of [false, true]) { // the first round warms up
    const start = performance.now();
    const encoder = device.createCommandEncoder();
    for (let i = 0; i < N; i++) record(encoder);
    device.queue.submit([encoder.finish()]);
    const recorded = performance.now();
    await device.queue.onSubmittedWorkDone();
    if (measured) {
      const done = performance.now();
      console.log(
        `${label}: ${us(recorded - start, N)} µs to record, ${us(done - start, N)} in all`,
      );
    }
  }
}
await perDispatch("a pass per dispatch, one bind group", (e) => dispatch(e, shared));
await perDispatch("a pass per dispatch, a new bind group", (e) => dispatch(e, bindGroup()));
await perDispatch("a pass per dispatch and a 16-byte writeBuffer", (e) => {
  device.queue.writeBuffer(uniform, 0, new Float32Array(4));
  dispatch(e, shared);
});
{
  const start = performance.now();
  for (let i = 0; i < 200; i++) {
    const encoder = device.createCommandEncoder();
    dispatch(encoder, shared);
    device.queue.submit([encoder.finish()]);
  }
  await device.queue.onSubmittedWorkDone();
  console.log(`a submit per dispatch: ${us(performance.now() - start, 200)} µs each`);
}
{
  const read = device.createBuffer({
    size: 256,
    usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST,
  });
  const times: number[] = [];
  for (let i = 0; i < 21; i++) {
    const start = performance.now();
    const encoder = device.createCommandEncoder();
    encoder.copyBufferToBuffer(storage, 0, read, 0, 256);
    device.queue.submit([encoder.finish()]);
    await read.mapAsync(GPUMapMode.READ);
    read.unmap();
    times.push(performance.now() - start);
  }
  console.log(
    `read-back round trip (copy, submit, mapAsync): median ${median(times).toFixed(2)} ms`,
  );
}
Deno.exit(0);
