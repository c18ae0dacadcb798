/**
 * What Deno's WebGPU costs per call, without ONNX Runtime: tiny compute dispatches (a decode step
 * of the chat benchmark model issues on the order of a thousand), each in its own pass as
 * onnxruntime-web records them, with the same or a new bind group, with a small uniform write;
 * a submit per dispatch; one read-back round trip (`mapAsync`), which every step pays for its
 * logits; and uploads of one cache tensor of a 1,500-token conversation (1.2 MB) the two ways there
 * are: onnxruntime-web's (a staging buffer mapped at creation, `getMappedRange`, copy, unmap) and
 * `queue.writeBuffer`. On the H200 a long cached prefix fed from the CPU cost ~24 MB/s of upload
 * (bench/RESULTS.md); the first way reads the mapped memory back if Deno copies the mapped range
 * into JS, which is slow when that memory is the GPU's own.
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
{
  const bytes = 1_179_648; // [1, 3, 1536, 64] float32
  const data = new Uint8Array(bytes).fill(7);
  const target = device.createBuffer({
    size: bytes,
    usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST,
  });
  const uploads = 20;
  const stage = () => {
    const staging = device.createBuffer({
      size: bytes,
      usage: GPUBufferUsage.MAP_WRITE | GPUBufferUsage.COPY_SRC,
      mappedAtCreation: true,
    });
    new Uint8Array(staging.getMappedRange()).set(data);
    staging.unmap();
    const encoder = device.createCommandEncoder();
    encoder.copyBufferToBuffer(staging, 0, target, 0, bytes);
    device.queue.submit([encoder.finish()]);
    staging.destroy();
  };
  const each = async (upload: () => void) => {
    const start = performance.now();
    for (let i = 0; i < uploads; i++) upload();
    await device.queue.onSubmittedWorkDone();
    return (performance.now() - start) / uploads;
  };
  await each(stage); // warm-up
  const staged = await each(stage);
  const written = await each(() => device.queue.writeBuffer(target, 0, data));
  const mbps = (ms: number) => (bytes / 1e3 / ms).toFixed(0);
  console.log(
    `upload of 1.2 MB (${uploads} in a row, one wait): staged (mapped at creation) ` +
      `${staged.toFixed(2)} ms each (${mbps(staged)} MB/s), writeBuffer ${written.toFixed(2)} ms ` +
      `(${mbps(written)} MB/s)`,
  );
}
Deno.exit(0);
