// The JSON Schema keywords the schema compiler accepts, and the string formats it can generate.

/** Keywords that only annotate a schema: allowed anywhere, never constraining output. */
export const ANNOTATIONS: ReadonlySet<string> = new Set([
  "$schema",
  "$id",
  "$comment",
  "$defs",
  "definitions",
  "title",
  "description",
  "default",
  "examples",
  "deprecated",
  "readOnly",
  "writeOnly",
  // Annotations since draft 2019-09 (zod writes contentEncoding beside base64 patterns).
  "contentEncoding",
  "contentMediaType",
  "contentSchema",
]);

/** Each JSON type's own keywords (a schema without `type` allows the types its keywords imply). */
export const BY_TYPE: Record<string, readonly string[]> = {
  object: ["properties", "required", "additionalProperties", "propertyNames"],
  array: ["items", "prefixItems", "additionalItems", "minItems", "maxItems", "uniqueItems"],
  string: ["minLength", "maxLength", "pattern", "format"],
  number: ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"],
  integer: ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"],
  boolean: [],
  null: [],
};
const GENERAL = new Set(["type", "enum", "const", "anyOf", "oneOf", "allOf", "$ref", "nullable"]);

/** Every keyword the compiler knows; any other is refused. */
export const KNOWN: ReadonlySet<string> = new Set([
  ...ANNOTATIONS,
  ...GENERAL,
  ...Object.values(BY_TYPE).flat(),
]);

/** The formats we can generate, as patterns (a subset of each format, all of it valid). */
export const FORMATS: Record<string, string> = {
  "date": "^DATE$",
  "time": "^TIME$",
  "date-time": "^DATETTIME$",
  "email": "^[a-z0-9]{1,20}(\\.[a-z0-9]{1,20}){0,2}@([a-z0-9]{1,20}\\.){1,3}[a-z]{2,10}$",
  "uuid": "^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$",
  "ipv4": "^((25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)\\.){3}(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)$",
  "ipv6": "^([0-9a-f]{1,4}:){7}[0-9a-f]{1,4}$",
  "duration": "^P(\\d{1,4}D(T\\d{1,2}H)?|T\\d{1,2}H(\\d{1,2}M)?|\\d{1,3}W)$",
  "hostname": "^[a-z0-9]{1,20}(\\.[a-z0-9]{1,20}){0,3}$",
  "uri": "^https?://[a-z0-9]{1,20}(\\.[a-z0-9]{1,20}){0,3}(/[A-Za-z0-9._~-]{1,20}){0,4}$",
};
// Days that exist in every year (no 29 February), so no calendar check is needed.
const DATE = "\\d{4}-((0[13578]|1[02])-(0[1-9]|[12]\\d|3[01])|(0[469]|11)-(0[1-9]|[12]\\d|30)|" +
  "02-(0[1-9]|1\\d|2[0-8]))";
const TIME = "([01]\\d|2[0-3]):[0-5]\\d:[0-5]\\d(\\.\\d{1,6})?Z";
for (const [name, p] of Object.entries(FORMATS)) {
  FORMATS[name] = p.replace("DATE", DATE).replace("TIME", TIME);
}

/** The JSON Schema type of a JSON value (`integer` for whole numbers). */
export function jsonType(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  if (typeof v === "number") return Number.isInteger(v) ? "integer" : "number";
  return typeof v;
}
