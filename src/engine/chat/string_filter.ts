/**
 * Python's Jinja behaviours for strings that @huggingface/jinja lacks, for the templates it renders:
 * the `string` filter (it has none for mappings and writes lists as JSON; SmolLM3 lists its tools
 * as `tool | string`), where the template's `x | string` becomes a call of a function passed in
 * that writes Python's `str(x)`; iterating a string (it refuses one in a `for` loop; Llama 3.2
 * Vision loops over every message's content), where a loop over message content iterates a
 * string's characters through another function passed in; and string filters of an undefined
 * value, which Python reads as "" (Hermes 2 Pro trims each parameter's `description`).
 *
 * @module
 */

/** The template variable that stands in for Jinja's `string` filter (see {@link withStringFilter}). */
export const PYTHON_STR = "svc_python_str";

/**
 * The template with `x | string` inside its tags written as `svc_python_str(x)`, a function the
 * renderer passes in: @huggingface/jinja has no `string` filter for mappings (SmolLM3 lists its
 * tools as `tool | string`) and writes lists as JSON, where Python's Jinja writes `str(x)`. Only a
 * variable or an attribute/item path before the filter is rewritten; the template is returned
 * unchanged when it has none.
 */
export function withStringFilter(template: string): string {
  return inTags(
    template,
    (tag) =>
      tag.replace(
        /([A-Za-z_]\w*(?:\.\w+|\[[^\]]*\])*)\s*\|\s*string\b(?!\s*\()/g,
        `${PYTHON_STR}($1)`,
      ),
  );
}

// The template with each of its `{{ … }}` and `{% … %}` tags passed through `rewrite`.
function inTags(template: string, rewrite: (tag: string) => string): string {
  return template.replace(/\{\{[\s\S]*?\}\}|\{%[\s\S]*?%\}/g, rewrite);
}

/**
 * Python's `str(value)` for a value the template engine hands a function: a string as it is,
 * anything else as Python's `repr`.
 */
export function pythonStr(value: unknown): string {
  return typeof value === "string" ? value : pythonRepr(value);
}

// Python's repr of a template value: runtime values carry their type (floats keep a `.0`),
// mappings come as Maps.
function pythonRepr(value: unknown): string {
  if (value !== null && typeof value === "object" && "type" in value && "value" in value) {
    const { type, value: inner } = value as { type: string; value: unknown };
    if (type === "FloatValue" && Number.isInteger(inner)) return (inner as number).toFixed(1);
    return pythonRepr(inner);
  }
  if (value instanceof Map) {
    return `{${[...value].map(([k, v]) => `${pythonRepr(k)}: ${pythonRepr(v)}`).join(", ")}}`;
  }
  if (Array.isArray(value)) return `[${value.map(pythonRepr).join(", ")}]`;
  if (typeof value === "string") return pythonStringRepr(value);
  if (typeof value === "boolean") return value ? "True" : "False";
  if (value === null || value === undefined) return "None";
  if (typeof value === "object") return pythonRepr(new Map(Object.entries(value)));
  return String(value);
}

// Python's repr of a string: single quotes unless it holds one and no double quote.
function pythonStringRepr(text: string): string {
  const quote = text.includes("'") && !text.includes('"') ? '"' : "'";
  const escapes: Record<string, string> = { "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t" };
  let out = "";
  for (const ch of text) {
    const code = ch.codePointAt(0)!;
    if (ch in escapes) out += escapes[ch];
    else if (ch === quote) out += `\\${quote}`;
    else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, "0")}`;
    else out += ch;
  }
  return quote + out + quote;
}

/** The template variable that splits a string into characters (see {@link withStringIteration}). */
export const PYTHON_CHARS = "svc_python_chars";

/**
 * The template with each `{% for x in m.content %}` (or `m['content']`) loop iterating the
 * characters of string content, as Python's Jinja iterates a string; parts are iterated as they
 * are. The characters come from `svc_python_chars(text)`, a function the renderer passes in.
 */
export function withStringIteration(template: string): string {
  return template.replace(
    /(\{%-?\s*for\s+\w+\s+in\s+)(\w+(?:\[\s*['"]content['"]\s*\]|\.content))(\s*-?%\})/g,
    (_, head: string, expr: string, tail: string) =>
      `${head}(${expr} if ${expr} is not string else ${PYTHON_CHARS}(${expr}))${tail}`,
  );
}

/**
 * The template with `x | trim` (and the other string filters) inside its tags written as
 * `(x if x is defined else "") | trim`: Python's Jinja reads an undefined value as "" there,
 * @huggingface/jinja refuses it. Only a variable or an attribute/item path before the filter is
 * rewritten.
 */
export function withUndefinedAsEmpty(template: string): string {
  return inTags(
    template,
    (tag) =>
      tag.replace(
        /(?<![\w.\]'"])([A-Za-z_]\w*(?:\.\w+|\[[^\]]*\])*)(\s*\|\s*(?:trim|upper|lower|title|capitalize)\b)/g,
        (_, path: string, filter: string) => `(${path} if ${path} is defined else "")${filter}`,
      ),
  );
}
