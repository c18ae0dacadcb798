import { z } from "zod";
import { ValidationError } from "../../src/core/errors.ts";
import { parseRequest } from "../../src/protocol/validate.ts";
import { assertEquals, assertThrows } from "../_assert.ts";

const SCHEMA = z.object({
  n: z.int().min(1),
  name: z.string(),
  list: z.union([z.string(), z.array(z.object({ k: z.literal("a") }))]),
});

function errorFor(body: unknown): ValidationError {
  return assertThrows(() => parseRequest(SCHEMA, body), ValidationError);
}

Deno.test("parseRequest() reports missing fields, wrong types and bad values distinctly", () => {
  const missing = errorFor({ n: 1, list: "x" });
  assertEquals([missing.param, missing.code], ["name", "missing_required_parameter"]);
  assertEquals(missing.message, "Missing required parameter: 'name'.");
  const type = errorFor({ n: "1", name: "a", list: "x" });
  assertEquals([type.param, type.code], ["n", "invalid_type"]);
  assertEquals(type.message, "Invalid value for 'n': expected number, received string.");
  const value = errorFor({ n: 0, name: "a", list: "x" });
  assertEquals([value.param, value.code], ["n", "invalid_value"]);
  const root = errorFor([]);
  assertEquals([root.param, root.code], [null, "invalid_type"]);
});

Deno.test("parseRequest() follows a union into the branch the input meant", () => {
  assertEquals(errorFor({ n: 1, name: "a", list: [{ k: "a" }, { k: "b" }] }).param, "list.1.k");
  assertEquals(errorFor({ n: 1, name: "a", list: 5 }).param, "list");
  const missing = errorFor({ n: 1, name: "a" });
  assertEquals([missing.param, missing.code], ["list", "missing_required_parameter"]);
});
