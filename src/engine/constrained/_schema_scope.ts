// What the schema compiler's helper modules (one per JSON type, and oneOf's check) call back into:
// the compiler keeps the shared state (limits, $refs), they keep their keywords' rules.
import type { GrammarNode, JsonSpacing } from "./grammar.ts";
import type { SchemaOptions } from "./schema_compiler.ts";

/** A schema object (boolean schemas are handled before helpers see one). */
export type Schema = Record<string, unknown>;

/** The compiler as its helpers see it. */
export interface SchemaScope {
  readonly spacing: JsonSpacing;
  readonly options: SchemaOptions;
  /** Throws the schema's ValidationError, naming `path`. */
  fail(message: string, path: string): never;
  /** Compiles a subschema (counted and nested against the limits). */
  compile(schema: unknown, path: string): GrammarNode;
  /** The whole number `s[key]` holds, if any. */
  count(s: Schema, key: string, path: string): number | undefined;
  /** The types a schema allows; null for any. */
  types(s: Schema, path: string): string[] | null;
  /** The schema a chain of $refs leads to. */
  deref(schema: unknown, path: string): Schema;
  /** `s` with its allOf members merged in. */
  mergeAllOf(s: Schema, path: string): Schema;
}
