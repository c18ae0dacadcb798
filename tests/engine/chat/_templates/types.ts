// The shape of the chat template conformance corpus (see ../template_corpus_test.ts): one file per
// real template of a model family, with conversations in our own ChatMessage shape and the exact
// text the template writes for them.
import type { ChatMessage, ToolDefinition } from "../../../../src/core/inference_types.ts";

/** One conversation rendered by a corpus template. */
export interface CorpusCase {
  /** What the case shows (the test's name). */
  name: string;
  /** The conversation, as the engine gets it (tool call arguments are JSON text). */
  messages: ChatMessage[];
  /**
   * The request's tools. Some sources give a tool a `return` schema too; it is kept, since the
   * renderer hands a tool to the template as it is.
   */
  tools?: (ToolDefinition & Record<string, unknown>)[];
  /** `add_generation_prompt`. */
  addGenerationPrompt: boolean;
  /** Extra template variables (`chat_template_kwargs`), e.g. `enable_thinking`, `documents`. */
  kwargs?: Record<string, unknown>;
  /** The clock (ISO time) for templates that call `strftime_now`. */
  now?: string;
  /** The exact rendered text; absent when the template must refuse the conversation. */
  expected?: string;
  /** Text the error must hold when the template refuses the conversation (`raise_exception`). */
  rejects?: string;
  /** Where `expected` comes from: a published test's target, or derived by hand from the template. */
  expectedFrom: string;
  /**
   * Set when transformers.js' Jinja engine renders this template differently from Python's Jinja
   * (what transformers and vLLM run): why. `expected` is then Python's text and the case is skipped.
   */
  divergence?: string;
}

/** A real chat template and the conversations it is checked on. */
export interface CorpusTemplate {
  /** The model repository the template ships with. */
  model: string;
  /** The model family. */
  family: string;
  /** Where the template text was taken from. */
  source: string;
  /** The template, verbatim. */
  template: string;
  /** `bos_token` / `eos_token` of the model's tokenizer config (null: it has none). */
  bosToken: string | null;
  eosToken: string | null;
  cases: CorpusCase[];
}
