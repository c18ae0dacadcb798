// Checks on a compiled schema's grammar as a whole, once every $ref has its target: a ref cycle
// that reads no text, and a grammar that can write no complete value.
import { ValidationError } from "../../core/errors.ts";
import type { GrammarNode, RefNode } from "./grammar.ts";

/** A $ref that reaches itself through refs and anyOf alone would loop without reading any text. */
export function checkCycle(start: RefNode, param: string): void {
  const seen = new Set<GrammarNode>();
  const visit = (node: GrammarNode): void => {
    if (node === start && seen.size > 0) {
      throw new ValidationError(
        `the schema's ${
          JSON.stringify(start.name)
        } refers to itself without nesting (through $ref/anyOf alone)`,
        { param, code: "invalid_schema" },
      );
    }
    if (seen.has(node)) return;
    seen.add(node);
    if (node.kind === "ref") visit(node.target!);
    else if (node.kind === "alt") node.options.forEach(visit);
  };
  visit(start);
}

/**
 * True when the grammar can write some complete value: a fixpoint over its nodes, since $refs
 * can make them depend on one another (a required property whose schema is its own object never
 * ends).
 */
export function allowsSomeValue(root: GrammarNode): boolean {
  const nodes: GrammarNode[] = []; // children before parents, mostly, so few passes are needed
  const seen = new Set<GrammarNode>();
  const visit = (node: GrammarNode): void => {
    if (seen.has(node)) return;
    seen.add(node);
    for (const child of childrenOf(node)) visit(child);
    nodes.push(node);
  };
  visit(root);
  const can = new Set<GrammarNode>();
  const writes = (node: GrammarNode): boolean => {
    switch (node.kind) {
      case "seq":
        return node.items.every((n) => can.has(n));
      case "alt":
        return node.options.some((n) => can.has(n));
      case "ref":
        return can.has(node.target!);
      case "repeat":
        return node.min === 0 || (can.has(node.item) && (node.min < 2 || can.has(node.separator)));
      case "object":
        return node.properties.every((p) => !p.required || can.has(p.value));
      default:
        return true; // terminals (numbers are checked as they are built)
    }
  };
  for (let changed = true; changed;) {
    changed = false;
    for (const node of nodes) {
      if (!can.has(node) && writes(node)) {
        can.add(node);
        changed = true;
      }
    }
  }
  return can.has(root);
}

function childrenOf(node: GrammarNode): GrammarNode[] {
  switch (node.kind) {
    case "seq":
      return [...node.items];
    case "alt":
      return [...node.options];
    case "ref":
      return [node.target!];
    case "repeat":
      return [node.item, node.separator];
    case "object":
      return [
        ...node.properties.map((p) => p.value),
        ...(node.additional ? [node.additional, node.names] : []),
      ];
    default:
      return [];
  }
}
