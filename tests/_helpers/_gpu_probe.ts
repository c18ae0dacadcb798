// Prints this process's WebGPU adapter as getGpuInfo() and checkGpuAvailable() see it, as one JSON
// line (see gpu_adapter.ts for why this runs in a process of its own).
import { checkGpuAvailable, getGpuInfo } from "../../src/core/system.ts";

const info = await getGpuInfo({ timeoutMs: 10_000 });
const available = await checkGpuAvailable({ timeoutMs: 10_000 });
console.log(JSON.stringify({ info, available }));
