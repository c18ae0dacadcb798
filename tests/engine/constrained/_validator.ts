// A well-kept JSON Schema validator (Ajv, with ajv-formats) as the oracle for constrained
// decoding: every output the grammar allows must pass it. Draft 2020-12, or draft 7 for a schema
// that says so (tuples are `items` arrays there).
import { Ajv } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";
import formats from "ajv-formats";

// ajv-formats is CommonJS: its plugin is the module itself (typed as `default`).
const addFormats = formats as unknown as typeof formats.default;

/** Validates values against `schema`; returns null when valid, else Ajv's errors as text. */
export function validatorFor(schema: unknown): (value: unknown) => string | null {
  // `$schema` is read here, not by Ajv (which would want its meta-schema loaded); `nullable` is
  // OpenAPI's and allowed.
  const { $schema, ...rest } = (typeof schema === "object" ? schema : {}) as Record<
    string,
    unknown
  >;
  // multipleOf in doubles: 0.07 / 0.01 is 7.000000000000001, which Ajv refuses without a tolerance.
  const options = { strict: false, allErrors: true, multipleOfPrecision: 9 };
  const ajv = String($schema).includes("draft-07") ? new Ajv(options) : new Ajv2020(options);
  addFormats(ajv);
  const validate = ajv.compile(typeof schema === "boolean" ? schema : rest);
  return (value) => validate(value) ? null : ajv.errorsText(validate.errors);
}
