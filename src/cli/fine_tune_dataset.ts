/**
 * Validation of chat-format fine-tuning datasets (JSON Lines, one `{"messages": [...]}` per
 * line, as OpenAI-compatible fine-tuning APIs take them) and their statistics.
 *
 * @module
 */

/** Roles a message may have. */
export const DATASET_ROLES: readonly string[] = ["system", "user", "assistant", "tool"];

const EXAMPLE_KEYS = new Set(["messages", "tools", "functions", "parallel_tool_calls"]);
const MESSAGE_KEYS = new Set([
  "role",
  "content",
  "name",
  "tool_calls",
  "tool_call_id",
  "function_call",
  "weight",
  "refusal",
]);

/** A message as counted for tokens: role and plain text content. */
export interface DatasetMessage {
  role: string;
  content: string;
  [key: string]: unknown;
}

/** Counts the tokens of one example. */
export interface TokenCounter {
  /** Tokens of an example's messages as the model sees them (chat template included). */
  count(messages: DatasetMessage[]): number;
  /** True when the model's own tokenizer counts; false for an approximation. */
  exact: boolean;
  /** How tokens are counted, printed with the statistics. */
  label: string;
}

/** One problem, with its 1-based line number. */
export interface DatasetIssue {
  line: number;
  message: string;
}

/** What {@link validateChatDataset} found. */
export interface DatasetReport {
  /** Non-empty lines. */
  lines: number;
  /** Valid examples. */
  examples: number;
  /** Messages in valid examples. */
  messages: number;
  /** Messages per role in valid examples. */
  roles: Record<string, number>;
  /** Token statistics of valid examples; null when there are none. */
  tokens: { min: number; mean: number; max: number; total: number } | null;
  /** How tokens were counted. */
  tokenCounting: { exact: boolean; label: string };
  /** The context the examples were checked against; null when unknown. */
  contextLength: number | null;
  /** Lines of examples longer than the context. */
  overContext: number[];
  /** Examples identical to an earlier one. */
  duplicates: { line: number; firstLine: number }[];
  /** Problems that make the dataset unusable. */
  errors: DatasetIssue[];
  /** Problems worth knowing that do not stop a job. */
  warnings: DatasetIssue[];
}

/** Options of {@link validateChatDataset}. */
export interface ValidateDatasetOptions {
  /** Default: {@link approximateTokenCounter}. */
  counter?: TokenCounter;
  /** Longest example in tokens; null or absent: not checked. */
  contextLength?: number | null;
  /** Fewer valid examples than this is a warning; default 10 (OpenAI's minimum). */
  minExamples?: number;
}

/**
 * Checks every line of a JSONL chat dataset: valid JSON, an object with a non-empty `messages`
 * list, known keys, roles system/user/assistant/tool, text content, `tool_call_id` on tool
 * messages, at least one assistant message; counts tokens per example against the context and
 * finds duplicates.
 *
 * @example
 * ```ts
 * const report = validateChatDataset(
 *   '{"messages":[{"role":"user","content":"Hi"},{"role":"assistant","content":"Hello!"}]}\n',
 * );
 * console.log(report.examples, report.errors.length); // 1 0
 * ```
 */
export function validateChatDataset(
  text: string,
  options: ValidateDatasetOptions = {},
): DatasetReport {
  const counter = options.counter ?? approximateTokenCounter();
  const report: DatasetReport = {
    lines: 0,
    examples: 0,
    messages: 0,
    roles: {},
    tokens: null,
    tokenCounting: { exact: counter.exact, label: counter.label },
    contextLength: options.contextLength ?? null,
    overContext: [],
    duplicates: [],
    errors: [],
    warnings: [],
  };
  const seen = new Map<string, number>();
  const counts: number[] = [];
  const lines = text.replace(/^\uFEFF/, "").split(/\r?\n/);
  // A final newline is not an empty line.
  if (lines.length > 0 && lines[lines.length - 1] === "") lines.pop();
  lines.forEach((raw, index) => {
    const line = index + 1;
    if (raw.trim() === "") {
      report.warnings.push({ line, message: "empty line (skipped)" });
      return;
    }
    report.lines++;
    const messages = checkExample(raw, line, report.errors);
    if (messages === null) return;
    report.examples++;
    report.messages += messages.length;
    for (const m of messages) report.roles[m.role] = (report.roles[m.role] ?? 0) + 1;
    const key = JSON.stringify(messages.map((m) => [m.role, m.content, m.tool_calls ?? null]));
    const first = seen.get(key);
    if (first !== undefined) report.duplicates.push({ line, firstLine: first });
    else seen.set(key, line);
    const tokens = counter.count(messages);
    counts.push(tokens);
    if (report.contextLength !== null && tokens > report.contextLength) {
      report.overContext.push(line);
    }
  });
  if (counts.length > 0) {
    const total = counts.reduce((a, b) => a + b, 0);
    report.tokens = {
      min: Math.min(...counts),
      max: Math.max(...counts),
      mean: total / counts.length,
      total,
    };
  }
  const min = options.minExamples ?? 10;
  if (report.examples > 0 && report.examples < min) {
    report.warnings.push({
      line: 0,
      message:
        `only ${report.examples} valid examples: fine-tuning APIs usually need at least ${min}`,
    });
  }
  if (report.lines === 0) report.errors.push({ line: 0, message: "the dataset has no examples" });
  return report;
}

/** Checks one line; returns its messages with text content, or null after recording errors. */
function checkExample(raw: string, line: number, errors: DatasetIssue[]): DatasetMessage[] | null {
  const fail = (message: string): null => {
    errors.push({ line, message });
    return null;
  };
  let example: unknown;
  try {
    example = JSON.parse(raw);
  } catch (err) {
    return fail(`not valid JSON (${(err as Error).message})`);
  }
  if (typeof example !== "object" || example === null || Array.isArray(example)) {
    return fail('expected an object like {"messages": [...]}');
  }
  const unknown = Object.keys(example).filter((k) => !EXAMPLE_KEYS.has(k));
  if (unknown.length > 0) {
    return fail(`unrecognized key${unknown.length > 1 ? "s" : ""} ${unknown.join(", ")}`);
  }
  const list = (example as { messages?: unknown }).messages;
  if (!Array.isArray(list)) return fail('"messages" is missing or not a list');
  if (list.length === 0) return fail('"messages" is empty');
  const out: DatasetMessage[] = [];
  let ok = true;
  list.forEach((message, i) => {
    const where = `messages[${i}]`;
    const problem = checkMessage(message, where);
    if (typeof problem === "string") {
      errors.push({ line, message: problem });
      ok = false;
    } else out.push(problem);
  });
  if (!ok) return null;
  if (!out.some((m) => m.role === "assistant")) {
    return fail("no assistant message: an example needs at least one reply to learn from");
  }
  return out;
}

function checkMessage(message: unknown, where: string): DatasetMessage | string {
  if (typeof message !== "object" || message === null || Array.isArray(message)) {
    return `${where} is not an object`;
  }
  const m = message as Record<string, unknown>;
  const unknown = Object.keys(m).filter((k) => !MESSAGE_KEYS.has(k));
  if (unknown.length > 0) return `${where} has unrecognized key(s) ${unknown.join(", ")}`;
  if (typeof m.role !== "string" || !DATASET_ROLES.includes(m.role)) {
    return `${where}.role is ${JSON.stringify(m.role)}: expected one of ${
      DATASET_ROLES.join(", ")
    }`;
  }
  const calls = m.tool_calls !== undefined || m.function_call !== undefined;
  if (m.tool_calls !== undefined && (m.role !== "assistant" || !Array.isArray(m.tool_calls))) {
    return `${where}.tool_calls must be a list on an assistant message`;
  }
  if (m.role === "tool" && typeof m.tool_call_id !== "string") {
    return `${where} is a tool message without a tool_call_id`;
  }
  if (m.weight !== undefined && (m.role !== "assistant" || (m.weight !== 0 && m.weight !== 1))) {
    return `${where}.weight must be 0 or 1, on assistant messages only`;
  }
  if (m.name !== undefined && typeof m.name !== "string") return `${where}.name is not a string`;
  let content: string;
  if (typeof m.content === "string") content = m.content;
  else if (Array.isArray(m.content)) {
    const texts: string[] = [];
    for (const [j, part] of m.content.entries()) {
      const p = part as { type?: unknown; text?: unknown } | null;
      if (p?.type === "text" && typeof p.text === "string") texts.push(p.text);
      else if (p?.type !== "image_url" || m.role !== "user") {
        return `${where}.content[${j}] is not a text part ({"type":"text","text":...})`;
      }
    }
    content = texts.join("\n");
  } else if ((m.content === null || m.content === undefined) && m.role === "assistant" && calls) {
    content = "";
  } else {
    return `${where}.content is ${
      m.content === undefined ? "missing" : JSON.stringify(m.content)
    }` +
      ": expected text";
  }
  return { ...m, role: m.role, content } as DatasetMessage;
}

/**
 * An approximate counter for when the model's tokenizer is not available: about 4 characters
 * per token for most scripts, one token per CJK character, plus 4 tokens per message for the
 * chat template's markers.
 *
 * @example
 * ```ts
 * approximateTokenCounter().count([{ role: "user", content: "Hello there" }]); // 7
 * ```
 */
export function approximateTokenCounter(reason = "no local tokenizer"): TokenCounter {
  return {
    exact: false,
    label: `APPROXIMATE (${reason}): ~4 characters per token, 1 per CJK character, ` +
      "+4 per message",
    count(messages) {
      let total = 0;
      for (const m of messages) {
        const text = m.content + (m.tool_calls ? JSON.stringify(m.tool_calls) : "");
        const cjk = text.match(/[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\uf900-\ufaff]/g)?.length ??
          0;
        total += cjk + Math.ceil((text.length - cjk) / 4) + 4;
      }
      return total;
    },
  };
}

/**
 * The statistics and problems of a report as text for the terminal (at most `maxIssues`
 * problems of each kind are listed).
 *
 * @example
 * ```ts
 * console.log(formatDatasetReport(validateChatDataset("{}\n"), { name: "train.jsonl" }));
 * ```
 */
export function formatDatasetReport(
  report: DatasetReport,
  options: { name: string; maxIssues?: number },
): string {
  const max = options.maxIssues ?? 20;
  const out: string[] = [`${options.name}:`];
  const roles = Object.entries(report.roles).map(([r, n]) => `${n} ${r}`).join(", ");
  out.push(`  examples:    ${report.examples} valid of ${report.lines}`);
  out.push(`  messages:    ${report.messages}${roles ? ` (${roles})` : ""}`);
  out.push(`  tokens:      counted with ${report.tokenCounting.label}`);
  if (report.tokens) {
    const t = report.tokens;
    out.push(
      `               min ${t.min}, mean ${t.mean.toFixed(1)}, max ${t.max}, total ${t.total}` +
        ` per epoch`,
    );
  }
  out.push(
    report.contextLength === null
      ? "  context:     unknown (pass --context <tokens> to check example lengths)"
      : `  context:     ${report.contextLength} tokens; ${report.overContext.length} examples ` +
        `longer${listLines(report.overContext, max)}`,
  );
  out.push(
    `  duplicates:  ${report.duplicates.length}` +
      (report.duplicates.length
        ? ` (${
          report.duplicates.slice(0, max).map((d) => `line ${d.line} = line ${d.firstLine}`)
            .join(", ")
        }${report.duplicates.length > max ? ", …" : ""})`
        : ""),
  );
  out.push(`  errors:      ${report.errors.length}`);
  for (const issue of report.errors.slice(0, max)) out.push(`    ${where(issue)}${issue.message}`);
  if (report.errors.length > max) out.push(`    … and ${report.errors.length - max} more`);
  if (report.warnings.length > 0) {
    out.push(`  warnings:    ${report.warnings.length}`);
    for (const issue of report.warnings.slice(0, max)) {
      out.push(`    ${where(issue)}${issue.message}`);
    }
    if (report.warnings.length > max) out.push(`    … and ${report.warnings.length - max} more`);
  }
  return out.join("\n");
}

function where(issue: DatasetIssue): string {
  return issue.line > 0 ? `line ${issue.line}: ` : "";
}

function listLines(lines: number[], max: number): string {
  if (lines.length === 0) return "";
  const shown = lines.slice(0, max).join(", ");
  return ` (line${lines.length > 1 ? "s" : ""} ${shown}${lines.length > max ? ", …" : ""})`;
}
