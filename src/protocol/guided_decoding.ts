/**
 * vLLM's structured-output request fields on `/v1/chat/completions` and `/v1/completions`: the
 * older `guided_json`, `guided_regex`, `guided_choice` (with `guided_grammar`,
 * `guided_whitespace_pattern`, `guided_decoding_backend`), and `structured_outputs` that replaced
 * them (`{json | regex | choice | grammar | json_object | structural_tag, …}`), with their
 * validation and conversion to the engine's {@link ResponseFormat}, and the options that shape
 * JSON (`disable_any_whitespace`, `disable_additional_properties`; before `structured_outputs`,
 * vLLM read them from `guided_decoding_backend` as `"guidance:disable-any-whitespace,…"`).
 *
 * @module
 */
import { z } from "zod";
import { ValidationError } from "../core/errors.ts";
import type { ResponseFormat } from "../core/inference_types.ts";
import type { WireToolFields } from "./tools.ts";

/** A JSON Schema, or its JSON text (vLLM takes both). */
export type WireGuidedJson = Record<string, unknown> | boolean | string;

/** vLLM's `structured_outputs`: one constraint, and options. */
export interface WireStructuredOutputs {
  json?: WireGuidedJson | null;
  regex?: string | null;
  choice?: string[] | null;
  /** EBNF / Lark grammar: not supported (a 400). */
  grammar?: string | null;
  json_object?: boolean | null;
  /** Not supported (a 400). */
  structural_tag?: unknown;
  /** Not supported (a 400): JSON is written compactly. */
  whitespace_pattern?: string | null;
  /** JSON with no whitespace outside strings (else one space may follow `:` and `,`). */
  disable_any_whitespace?: boolean | null;
  /** Objects with `properties` and no `additionalProperties` allow no other keys. */
  disable_additional_properties?: boolean | null;
  /** Accepted: a constraint we cannot enforce is a 400, never a fallback. */
  disable_fallback?: boolean | null;
}

/** The guided decoding fields of a chat or legacy completion request. */
export interface WireGuidedFields {
  /** The output is JSON valid against this schema (as `response_format` `json_schema`). */
  guided_json?: WireGuidedJson | null;
  /** The whole output matches this regular expression. */
  guided_regex?: string | null;
  /** The output is exactly one of these strings. */
  guided_choice?: string[] | null;
  /** Not supported (a 400). */
  guided_grammar?: string | null;
  /** Not supported (a 400). */
  guided_whitespace_pattern?: string | null;
  /**
   * The backend is ignored (there is one); options after a colon (vLLM 0.8's
   * `"xgrammar:disable-any-whitespace"`, `"guidance:no-additional-properties"`) are honoured.
   */
  guided_decoding_backend?: string | null;
  structured_outputs?: WireStructuredOutputs | null;
}

/** Most strings `guided_choice` may list (as many as a schema's `enum` values in all). */
export const MAX_GUIDED_CHOICES = 1000;

const JSON_SCHEMA = z.union([z.record(z.string(), z.unknown()), z.boolean(), z.string()], {
  error: "expected a JSON Schema (an object, or its JSON text)",
});
const CHOICES = z.array(z.string())
  .min(1, { error: "expected at least one choice" })
  .max(MAX_GUIDED_CHOICES, { error: `at most ${MAX_GUIDED_CHOICES} choices are allowed` });

/** The zod shape of {@link WireGuidedFields}, spread into the chat and completion schemas. */
export const GUIDED_FIELDS_SHAPE = {
  guided_json: JSON_SCHEMA.nullish(),
  guided_regex: z.string().nullish(),
  guided_choice: CHOICES.nullish(),
  guided_grammar: z.string().nullish(),
  guided_whitespace_pattern: z.string().nullish(),
  guided_decoding_backend: z.string().nullish(),
  structured_outputs: z.strictObject({
    json: JSON_SCHEMA.nullish(),
    regex: z.string().nullish(),
    choice: CHOICES.nullish(),
    grammar: z.string().nullish(),
    json_object: z.boolean().nullish(),
    structural_tag: z.unknown().optional(),
    whitespace_pattern: z.string().nullish(),
    disable_any_whitespace: z.boolean().nullish(),
    disable_additional_properties: z.boolean().nullish(),
    disable_fallback: z.boolean().nullish(),
  }).nullish(),
};

const GRAMMAR =
  "grammars (EBNF, Lark) are not supported by this server; use a JSON Schema, a regex " +
  "or a list of choices";
const WHITESPACE = "JSON is written compactly (at most one space after ':' and ',', or none " +
  "with disable_any_whitespace); another whitespace rule is not supported";

// Fields we cannot honour, by name, when they ask for something.
function unsupported(req: WireGuidedFields): [string, string] | undefined {
  const so = req.structured_outputs;
  const fields: [string, unknown, string][] = [
    ["guided_grammar", req.guided_grammar, GRAMMAR],
    ["guided_whitespace_pattern", req.guided_whitespace_pattern, WHITESPACE],
    ["structured_outputs.grammar", so?.grammar, GRAMMAR],
    ["structured_outputs.structural_tag", so?.structural_tag, "structural tags are not supported"],
    ["structured_outputs.whitespace_pattern", so?.whitespace_pattern, WHITESPACE],
  ];
  const found = fields.find(([, value]) => value != null);
  return found && [found[0], found[2]];
}

// The constraints a request asks for, by field, in the order they are read.
function constraints(req: WireGuidedFields): [string, unknown][] {
  const so = req.structured_outputs;
  const all: [string, unknown][] = [
    ["guided_json", req.guided_json],
    ["guided_regex", req.guided_regex],
    ["guided_choice", req.guided_choice],
    ["structured_outputs.json", so?.json],
    ["structured_outputs.regex", so?.regex],
    ["structured_outputs.choice", so?.choice],
    ["structured_outputs.json_object", so?.json_object || null],
  ];
  return all.filter(([, value]) => value != null);
}

// Forcing tool calls leaves no answer for a format to shape.
function forcesCalls(choice: WireToolFields["tool_choice"]): string | undefined {
  if (choice === "required") return "tool_choice 'required'";
  if (typeof choice !== "object" || choice === null) return undefined;
  if (choice.type === "function") return "a named tool_choice";
  return choice.allowed_tools.mode === "required"
    ? "tool_choice allowed_tools 'required'"
    : undefined;
}

/**
 * Refuses what the guided fields cannot mean: a constraint we do not support (grammars, other
 * whitespace; `unsupported_parameter`), two constraints at once, one beside `response_format` or a
 * `tool_choice` that forces calls, `structured_outputs` without a constraint (unless its options
 * shape the JSON of `guided_json` or a `response_format`), or `guided_json` text that is not a
 * JSON Schema. Throws a `ValidationError` naming the field.
 *
 * @example
 * ```ts
 * import { checkGuidedFields } from "./guided_decoding.ts";
 * checkGuidedFields({ guided_choice: ["yes", "no"] }); // fine
 * ```
 */
export function checkGuidedFields(
  req: WireGuidedFields & Pick<WireToolFields, "response_format" | "tool_choice">,
): void {
  const refused = unsupported(req);
  if (refused !== undefined) {
    throw new ValidationError(`Unsupported parameter: '${refused[0]}': ${refused[1]}.`, {
      param: refused[0],
      code: "unsupported_parameter",
    });
  }
  const asked = constraints(req);
  const invalid = (param: string, message: string) =>
    new ValidationError(`Invalid value for '${param}': ${message}.`, {
      param,
      code: "invalid_value",
    });
  // Options alone shape the JSON another field asks for (vLLM merges response_format into them).
  const format = req.response_format?.type;
  const json = format === "json_schema" || format === "json_object" || req.guided_json != null;
  const own = asked.some(([p]) => p.startsWith("structured_"));
  if (req.structured_outputs != null && !own && !json) {
    throw invalid(
      "structured_outputs",
      "give one constraint: json, regex, choice or json_object (true); its options alone go " +
        "with guided_json or a response_format json_schema or json_object",
    );
  }
  if (asked.length === 0) return;
  const [param, value] = asked[0];
  if (asked.length > 1) {
    throw invalid(asked[1][0], `give one structured output constraint; ${param} is given too`);
  }
  if (format !== undefined && format !== "text") {
    throw invalid(param, `give one structured output constraint; response_format is given too`);
  }
  const forced = forcesCalls(req.tool_choice);
  if (forced !== undefined) {
    throw invalid(param, `${forced} makes the output tool calls, which it cannot shape`);
  }
  if (typeof value === "string" && param.endsWith("json")) schemaText(value, param);
}

// A JSON Schema given as JSON text.
function schemaText(text: string, param: string): Record<string, unknown> | boolean {
  let schema: unknown;
  try {
    schema = JSON.parse(text);
  } catch (err) {
    throw new ValidationError(
      `Invalid value for '${param}': the text is not JSON (${(err as Error).message}).`,
      { param, code: "invalid_value" },
    );
  }
  if (typeof schema === "boolean" || (typeof schema === "object" && schema !== null)) {
    if (!Array.isArray(schema)) return schema as Record<string, unknown> | boolean;
  }
  throw new ValidationError(
    `Invalid value for '${param}': expected a JSON Schema (an object), got ${text.slice(0, 40)}.`,
    { param, code: "invalid_value" },
  );
}

/**
 * The format the guided fields of a request checked by {@link checkGuidedFields} ask for, else
 * `options.responseFormat` (the request's `response_format`), or undefined; a JSON format carries
 * the JSON options the request gives. Errors in the schema or regex will name the field it came
 * from.
 *
 * @example
 * ```ts
 * import { guidedResponseFormat } from "./guided_decoding.ts";
 * guidedResponseFormat({ guided_regex: "\\d+" });
 * // { type: "regex", pattern: "\\d+", param: "guided_regex" }
 * const so = { json_object: true, disable_any_whitespace: true };
 * guidedResponseFormat({ structured_outputs: so }); // { type: "json_object", compact: true }
 * ```
 */
export function guidedResponseFormat(
  req: WireGuidedFields,
  options: { responseFormat?: ResponseFormat } = {},
): ResponseFormat | undefined {
  const format = constraintFormat(req) ?? options.responseFormat;
  if (format?.type !== "json_object" && format?.type !== "json_schema") return format;
  const so = req.structured_outputs;
  const backend = backendOptions(req.guided_decoding_backend);
  const shaped = { ...format };
  if (so?.disable_any_whitespace === true || backend.has("disable-any-whitespace")) {
    shaped.compact = true;
  }
  const closed = so?.disable_additional_properties === true ||
    backend.has("no-additional-properties");
  // json_object lists no properties, so closing objects leaves it as it is (as in vLLM).
  if (closed && shaped.type === "json_schema") shaped.closedObjects = true;
  return shaped;
}

// vLLM 0.8 took per-request options after the backend's name ("guidance:no-additional-properties,
// disable-any-whitespace"); like vLLM, options it does not know are ignored.
function backendOptions(backend: string | null | undefined): Set<string> {
  const colon = backend?.indexOf(":") ?? -1;
  if (colon === -1) return new Set();
  return new Set(backend!.slice(colon + 1).split(",").map((o) => o.trim()));
}

// The format of the guided constraint a request gives, if any.
function constraintFormat(req: WireGuidedFields): ResponseFormat | undefined {
  const asked = constraints(req)[0];
  if (asked === undefined) return undefined;
  const [param, value] = asked;
  if (param.endsWith("json_object")) return { type: "json_object" };
  if (param.endsWith("json")) {
    const schema = typeof value === "string" ? schemaText(value, param) : value;
    return { type: "json_schema", schema: schema as Record<string, unknown> | boolean, param };
  }
  if (param.endsWith("regex")) return { type: "regex", pattern: value as string, param };
  return { type: "choice", choices: value as string[] };
}
