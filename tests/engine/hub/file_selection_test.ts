import { NotFoundError, ValidationError } from "../../../src/core/errors.ts";
import {
  availableDtypes,
  isExternalDataOf,
  planModelFiles,
  selectModelFiles,
} from "../../../src/engine/hub/file_selection.ts";
import type { HubListing } from "../../../src/engine/hub/hub_client.ts";
import { assertEquals, assertMatch, assertRejects, assertThrows } from "../../_assert.ts";

const listing = (...names: string[]): HubListing => ({
  siblings: names.map((rfilename) => ({ rfilename, size: 10 })),
});
const BASE = ["config.json", "tokenizer.json", "tokenizer_config.json"];

Deno.test("planModelFiles() rejects an unknown dtype, naming the choices", () => {
  assertThrows(
    // deno-lint-ignore no-explicit-any
    () => planModelFiles(listing(...BASE, "onnx/model.onnx"), "o/n", { dtype: "fp8" as any }),
    ValidationError,
    "fp32, fp16, q8, int8, uint8, q4, q4f16, bnb4",
  );
});

Deno.test("selectModelFiles() takes configs, optional files and the dtype's external data", () => {
  const files = selectModelFiles(
    listing(
      ...BASE,
      "generation_config.json",
      "1_Pooling/config.json",
      "README.md",
      "onnx/model.onnx",
      "onnx/model_fp16.onnx",
      "onnx/model_fp16.onnx_data",
      "onnx/model_fp16.onnx_data_1",
      "onnx/model.onnx_data",
    ),
    "o/n",
    { dtype: "fp16" },
  );
  assertEquals(
    files.map((f) => f.path).toSorted(),
    [
      ...BASE,
      "1_Pooling/config.json",
      "generation_config.json",
      "onnx/model_fp16.onnx",
      "onnx/model_fp16.onnx_data",
      "onnx/model_fp16.onnx_data_1",
    ].toSorted(),
  );
});

Deno.test("selectModelFiles() adds extraFiles that exist and refuses ones outside the repo", () => {
  const files = selectModelFiles(
    listing(...BASE, "onnx/model.onnx", "preprocessor_config.json"),
    "o/n",
    { extraFiles: ["preprocessor_config.json", "absent.json"] },
  );
  assertEquals(files.some((f) => f.path === "preprocessor_config.json"), true);
  assertEquals(files.some((f) => f.path === "absent.json"), false);
  assertThrows(
    () => selectModelFiles(listing(...BASE, "onnx/model.onnx"), "o/n", { extraFiles: ["../x"] }),
    ValidationError,
  );
});

Deno.test("selectModelFiles() names missing required files", async () => {
  await assertRejects(
    () => selectModelFiles(listing("config.json", "onnx/model.onnx"), "o/n"),
    NotFoundError,
    `"tokenizer.json", "tokenizer_config.json"`,
  );
  const noOnnx = assertThrows(
    () => selectModelFiles(listing(...BASE, "model.safetensors"), "o/n"),
    NotFoundError,
  );
  assertMatch(noOnnx.message, /no ONNX weights/);
});

Deno.test("availableDtypes() lists the dtypes a repo has ONNX files for", () => {
  assertEquals(
    availableDtypes(
      listing("onnx/model.onnx", "onnx/model_quantized.onnx", "onnx/model_q4f16.onnx"),
    ),
    ["fp32", "q8", "q4f16"],
  );
});

Deno.test("planModelFiles() with no dtype named picks the device's best the repo has", () => {
  const repo = listing(
    ...BASE,
    "onnx/model.onnx",
    "onnx/model_fp16.onnx",
    "onnx/model_quantized.onnx",
    "onnx/model_q4f16.onnx",
  );
  assertEquals(planModelFiles(repo, "o/n").dtype, "q8");
  assertEquals(planModelFiles(repo, "o/n", { device: "webgpu" }).dtype, "q4f16");
  const fp32Only = planModelFiles(listing(...BASE, "onnx/model.onnx"), "o/n", { device: "cpu" });
  assertEquals([fp32Only.dtype, fp32Only.onnxPath], ["fp32", "onnx/model.onnx"]);
});

Deno.test("planModelFiles() takes merged-decoder repos and says so in modelFileName", () => {
  const repo = listing(
    ...BASE,
    "onnx/decoder_model_merged.onnx",
    "onnx/decoder_model_merged_q4f16.onnx",
    "onnx/decoder_model.onnx",
  );
  const plan = planModelFiles(repo, "o/n", { dtype: "q4f16" });
  assertEquals([plan.dtype, plan.modelFileName], ["q4f16", "decoder_model_merged"]);
  assertEquals(
    plan.files.map((f) => f.path).toSorted(),
    [...BASE, "onnx/decoder_model_merged_q4f16.onnx"].toSorted(),
  );
  assertEquals(planModelFiles(repo, "o/n").onnxPath, "onnx/decoder_model_merged.onnx");
  const err = assertThrows(() => planModelFiles(repo, "o/n", { dtype: "q8" }), NotFoundError);
  assertMatch(err.message, /decoder_model_merged_quantized\.onnx/);
  assertMatch(err.message, /it has fp32, q4f16/);
  // `model*.onnx` wins when the repository has both.
  const both = listing(...BASE, "onnx/model_q4.onnx", "onnx/decoder_model_merged_q4.onnx");
  assertEquals(planModelFiles(both, "o/n").modelFileName, "model");
});

Deno.test("planModelFiles() fetches external data in both spellings, chunks included", () => {
  const plan = planModelFiles(
    listing(
      ...BASE,
      "onnx/model.onnx",
      "onnx/model.onnx_data",
      "onnx/model.onnx_data_1",
      "onnx/model.onnx_data_2",
      "onnx/model.onnx.data",
      "onnx/model_q4.onnx_data",
      "onnx/model.onnx_database",
    ),
    "o/n",
    { dtype: "fp32" },
  );
  assertEquals(
    plan.files.map((f) => f.path).filter((p) => p.startsWith("onnx/")).toSorted(),
    [
      "onnx/model.onnx",
      "onnx/model.onnx.data",
      "onnx/model.onnx_data",
      "onnx/model.onnx_data_1",
      "onnx/model.onnx_data_2",
    ],
  );
  assertEquals(isExternalDataOf("onnx/model_q4f16.onnx", "onnx/model_q4f16.onnx.data"), true);
  assertEquals(isExternalDataOf("onnx/model.onnx", "onnx/model.onnx_data_x"), false);
});

Deno.test("planModelFiles() falls back from a missing named dtype only when allowed", () => {
  const repo = listing(...BASE, "onnx/model.onnx", "onnx/model_quantized.onnx");
  assertThrows(() => planModelFiles(repo, "o/n", { dtype: "q4f16" }), NotFoundError, "q8");
  const plan = planModelFiles(repo, "o/n", { dtype: "q4f16", allowFallback: true });
  assertEquals(plan.dtype, "q8");
  assertMatch(plan.fallback ?? "", /no q4f16 weights; loading q8 instead/);
});

Deno.test("selectModelFiles() takes sentence-transformers module folders (Dense weights) too", () => {
  const files = selectModelFiles(
    listing(
      ...BASE,
      "modules.json",
      "onnx/model.onnx",
      "1_Pooling/config.json",
      "2_Dense/config.json",
      "2_Dense/model.safetensors",
      "2_Dense/pytorch_model.bin",
      "3_Dense/config.json",
      "3_Dense/model.safetensors",
      "notes/config.json",
    ),
    "o/gemma",
  );
  assertEquals(
    files.map((f) => f.path).sort(),
    [
      ...BASE,
      "1_Pooling/config.json",
      "2_Dense/config.json",
      "2_Dense/model.safetensors",
      "3_Dense/config.json",
      "3_Dense/model.safetensors",
      "modules.json",
      "onnx/model.onnx",
    ].sort(),
  );
});
