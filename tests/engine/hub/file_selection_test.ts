import { NotFoundError, ValidationError } from "../../../src/core/errors.ts";
import {
  availableDtypes,
  onnxFileFor,
  selectModelFiles,
} from "../../../src/engine/hub/file_selection.ts";
import type { HubListing } from "../../../src/engine/hub/hub_client.ts";
import { assertEquals, assertMatch, assertRejects, assertThrows } from "../../_assert.ts";

const listing = (...names: string[]): HubListing => ({
  siblings: names.map((rfilename) => ({ rfilename, size: 10 })),
});
const BASE = ["config.json", "tokenizer.json", "tokenizer_config.json"];

Deno.test("onnxFileFor() names the file transformers.js loads for each dtype", () => {
  assertEquals(onnxFileFor("fp32"), "onnx/model.onnx");
  assertEquals(onnxFileFor("q8"), "onnx/model_quantized.onnx");
  assertEquals(onnxFileFor("fp16"), "onnx/model_fp16.onnx");
  assertEquals(onnxFileFor("q4", "decoder_model_merged"), "onnx/decoder_model_merged_q4.onnx");
  // deno-lint-ignore no-explicit-any
  assertThrows(() => onnxFileFor("fp8" as any), ValidationError, "fp32, fp16, q8");
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
