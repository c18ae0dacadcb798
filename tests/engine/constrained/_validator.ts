// A well-kept JSON Schema validator (Ajv, draft 2020-12, with ajv-formats) as the oracle for
// constrained decoding: every output the grammar allows must pass it.
import { Ajv2020 } from "ajv/dist/2020.js";
import formats from "ajv-formats";

// ajv-formats is CommonJS: its plugin is the module itself (typed as `default`).
const addFormats = formats as unknown as typeof formats.default;

/** Validates values against `schema`; returns null when valid, else Ajv's errors as text. */
export function validatorFor(schema: unknown): (value: unknown) => string | null {
  // `$schema` of older drafts is annotation here; `nullable` is OpenAPI's and allowed.
  const { $schema: _, ...rest } = (typeof schema === "object" ? schema : {}) as Record<
    string,
    unknown
  >;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  const validate = ajv.compile(typeof schema === "boolean" ? schema : rest);
  return (value) => validate(value) ? null : ajv.errorsText(validate.errors);
}
