/**
 * Svc: a Deno-native foundation layer for LLM applications — an OpenAI-compatible gateway, an
 * inference engine on transformers.js, an embedding server, a unified client library and a CLI.
 *
 * Imported, this module is the library. Run as the main module it is the `svc` CLI, so
 * `deno run -A jsr:@svc/cli llm serve` works.
 *
 * @example
 * ```ts
 * import { SvcPorts } from "@svc/cli";
 * console.log(SvcPorts.GATEWAY_DEFAULT); // 8000
 * ```
 *
 * @module
 */

export {
  AuthenticationError,
  CancelledError,
  ConfigurationError,
  ConflictError,
  ContextLengthError,
  MethodNotAllowedError,
  NotFoundError,
  PayloadTooLargeError,
  RateLimitError,
  ServiceError,
  ServiceUnavailableError,
  SvcException,
  ValidationError,
} from "./src/core/errors.ts";
export type { RetryableErrorOptions, SvcErrorOptions } from "./src/core/errors.ts";

// Configuration
export { isWsl, SvcPorts } from "./src/config/ports.ts";
export type { PortCheckOptions, ProcTextReader, WslDetectionOptions } from "./src/config/ports.ts";
export { loadConfig, readEnvVariable, redactConfig, setEnvVariable } from "./src/config/env.ts";
export type {
  ConfigOverrides,
  ConfigSource,
  EnvMap,
  LoadConfigOptions,
  SvcConfig,
} from "./src/config/env.ts";
export { ENV_VARIABLES, parseBooleanWord, parseEnvValue } from "./src/config/env_vars.ts";
export type {
  EnvVariable,
  SvcConfigValues,
  SvcDevice,
  SvcLogLevel,
} from "./src/config/env_vars.ts";
export { parseEnvText, readEnvFile, updateEnvFile } from "./src/config/env_file.ts";
export type { EnvFileValue } from "./src/config/env_file.ts";
export {
  CHINA_HF_MIRROR_ENDPOINT,
  DEFAULT_HF_ENDPOINT,
  detectChinaMainland,
  ensureHfMirrorConfigured,
  getHfEndpoint,
  getNetworkRegion,
  resetNetworkRegionCache,
} from "./src/config/network_region.ts";
export type {
  HfMirrorDecision,
  NetworkRegion,
  NetworkRegionOptions,
  ReachabilityProbe,
} from "./src/config/network_region.ts";
export {
  ensureOutputDir,
  getOutputDir,
  OUTPUT_DIR_NAMES,
  OutputPaths,
} from "./src/config/output_paths.ts";
export type { OutputDirName, OutputPathsOptions } from "./src/config/output_paths.ts";

// Core
export {
  clearSecrets,
  getLogger,
  LogLevel,
  parseLogLevel,
  redactSecrets,
  registerSecret,
  setupLogger,
} from "./src/core/logging.ts";
export type { LogFields, Logger, LoggerOptions } from "./src/core/logging.ts";
export { deserialize, fromJson, serialize, toJson } from "./src/core/serialization.ts";
export type { ToJsonOptions } from "./src/core/serialization.ts";
export { checkGpuAvailable, getCpuCount, getGpuInfo, getMemoryInfo } from "./src/core/system.ts";
export type { GpuInfo, GpuProbeOptions, MemoryInfo } from "./src/core/system.ts";
export { checkPortAvailable, getFreePort, getLocalIp, waitForPort } from "./src/core/network.ts";
export type { LocalIpOptions, WaitForPortOptions } from "./src/core/network.ts";
export {
  createBatch,
  createInferenceResult,
  createMessage,
  createRecord,
  createUsage,
  validateBatch,
  validateInferenceResult,
  validateMessage,
  validateRecord,
} from "./src/core/types.ts";
export type {
  Batch,
  BatchOptions,
  DataRecord,
  EmbedInferenceResult,
  InferenceResult,
  InferenceUsage,
  Message,
  TextInferenceResult,
} from "./src/core/types.ts";
export {
  getDefaultRegistry,
  getModel,
  listModels,
  MODEL_SOURCES,
  ModelRegistry,
  registerModel,
  removeModel,
  setDefaultRegistryPath,
  touchModel,
} from "./src/core/model_registry.ts";
export type {
  ModelEntry,
  ModelEntryInit,
  ModelRegistryOptions,
  ModelSource,
} from "./src/core/model_registry.ts";

if (import.meta.main) {
  // Loaded lazily so importing the library never pulls in the CLI and the ML runtime.
  const { main } = await import("./cli.ts");
  Deno.exit(await main(Deno.args));
}
