// Model folders for the native tool-call tests: demo/chat (random weights) with a family's chat
// template and, as in the family's real tokenizer, its tool-call markers as added special tokens.
import { join } from "node:path";
import { cp } from "node:fs/promises";
import { demoFolder } from "../../_helpers/demo_engines.ts";
import { CORPUS } from "./_templates/corpus.ts";

/**
 * Added tokens of the demo (Qwen) tokenizer that no test template writes: their ids take the
 * markers, so the tokenizer keeps the model's vocabulary size.
 */
const SPARE_TOKENS = [
  "<|object_ref_start|>",
  "<|object_ref_end|>",
  "<|box_start|>",
  "<|box_end|>",
  "<|quad_start|>",
  "<|quad_end|>",
  "<|vision_start|>",
  "<|vision_end|>",
];

/** Mistral's markers (special tokens in its v3+ tokenizers). */
export const MISTRAL_SPECIAL_TOKENS = ["[TOOL_CALLS]", "[ARGS]"];

/** DeepSeek V3/R1/V3.1's markers (special tokens in their tokenizer). */
export const DEEPSEEK_SPECIAL_TOKENS = [
  "<｜tool▁calls▁begin｜>",
  "<｜tool▁calls▁end｜>",
  "<｜tool▁call▁begin｜>",
  "<｜tool▁call▁end｜>",
  "<｜tool▁sep｜>",
];

/**
 * Mistral Small 3.2's template (tokenizer v11) in its structure: a system prompt, the tools as
 * `[AVAILABLE_TOOLS]` JSON, `[INST]` turns, calls as `[TOOL_CALLS]name[ARGS]{...}` (arguments
 * through tojson when they are not text), `[TOOL_RESULTS]` for results. Its long default system
 * prompt is shortened.
 */
export const MISTRAL_SMALL_3_2_TEMPLATE =
  "{%- set default_system_message = 'You are a helpful assistant.' %}{{- bos_token }}" +
  "{%- if messages[0]['role'] == 'system' %}{{- '[SYSTEM_PROMPT]' + messages[0]['content'] + " +
  "'[/SYSTEM_PROMPT]' }}{%- set loop_messages = messages[1:] %}{%- else %}" +
  "{%- set loop_messages = messages %}" +
  "{{- '[SYSTEM_PROMPT]' + default_system_message + '[/SYSTEM_PROMPT]' }}{%- endif %}" +
  "{%- if tools is defined and tools is not none and tools|length > 0 %}" +
  "{{- '[AVAILABLE_TOOLS]' + (tools|tojson) + '[/AVAILABLE_TOOLS]' }}{%- endif %}" +
  "{%- for message in loop_messages %}" +
  "{%- if message['role'] == 'user' %}{{- '[INST]' + message['content'] + '[/INST]' }}" +
  "{%- elif message['role'] == 'assistant' %}{{- message['content'] or '' }}" +
  "{%- if message['tool_calls'] is defined and message['tool_calls'] is not none %}" +
  "{%- for tool in message['tool_calls'] %}{%- set arguments = tool['function']['arguments'] %}" +
  "{%- if arguments is not string %}{%- set arguments = arguments|tojson|safe %}" +
  "{%- elif arguments == '' %}{%- set arguments = '{}' %}{%- endif %}" +
  "{{- '[TOOL_CALLS]' + tool['function']['name'] + '[ARGS]' + arguments }}" +
  "{%- endfor %}{%- endif %}{{- eos_token }}" +
  "{%- elif message['role'] == 'tool' %}" +
  "{{- '[TOOL_RESULTS]' + message['content']|string + '[/TOOL_RESULTS]' }}" +
  "{%- else %}{{- raise_exception('Only user, assistant and tool roles are supported') }}" +
  "{%- endif %}{%- endfor %}";

/**
 * DeepSeek V3.1's way with calls on R1's template (V3.1's keeps R1's structure): the name right
 * after `<｜tool▁call▁begin｜>`, the arguments bare after `<｜tool▁sep｜>`, calls chained with no
 * separator.
 */
export const DEEPSEEK_V3_1_TEMPLATE: string = CORPUS["deepseek_r1.ts"].template
  .replaceAll(
    "<｜tool▁call▁begin｜>' + tool['type'] + '<｜tool▁sep｜>' + tool['function']['name'] + " +
      "'\\n' + '```json' + '\\n' + tool['function']['arguments'] + '\\n' + '```' + " +
      "'<｜tool▁call▁end｜>'",
    "<｜tool▁call▁begin｜>' + tool['function']['name'] + '<｜tool▁sep｜>' + " +
      "tool['function']['arguments'] + '<｜tool▁call▁end｜>'",
  )
  .replace("{{'\\n' + '<｜tool▁call▁begin｜>'", "{{'<｜tool▁call▁begin｜>'");

/** A model folder, removed on dispose; `specialIds` holds each special marker's id. */
export interface ToolModelFolder extends AsyncDisposable {
  folder: string;
  specialIds: Map<string, number>;
}

/** A copy of demo/chat with `template` as its chat template and `specialTokens` as special tokens. */
export async function toolModelFolder(
  template: string,
  options: { specialTokens?: readonly string[] } = {},
): Promise<ToolModelFolder> {
  const special = options.specialTokens ?? [];
  if (special.length > SPARE_TOKENS.length) throw new Error("not enough spare token ids");
  const folder = await Deno.makeTempDir({ prefix: "svc-tool-model-" });
  await cp(await demoFolder("demo/chat"), folder, { recursive: true });
  const rename = new Map(special.map((content, i) => [SPARE_TOKENS[i], content]));
  const specialIds = new Map<string, number>();

  const tokenizerPath = join(folder, "tokenizer.json");
  const tokenizer = JSON.parse(await Deno.readTextFile(tokenizerPath));
  for (const token of tokenizer.added_tokens) {
    const content = rename.get(token.content);
    if (content === undefined) continue;
    Object.assign(token, { content, special: true });
    specialIds.set(content, token.id);
  }
  await Deno.writeTextFile(tokenizerPath, JSON.stringify(tokenizer));

  const configPath = join(folder, "tokenizer_config.json");
  const config = JSON.parse(await Deno.readTextFile(configPath));
  for (const token of Object.values(config.added_tokens_decoder ?? {}) as { content: string }[]) {
    token.content = rename.get(token.content) ?? token.content;
  }
  config.additional_special_tokens = (config.additional_special_tokens ?? []).map(
    (content: string) => rename.get(content) ?? content,
  );
  config.chat_template = template;
  await Deno.writeTextFile(configPath, JSON.stringify(config));
  return {
    folder,
    specialIds,
    [Symbol.asyncDispose]: () => Deno.remove(folder, { recursive: true }),
  };
}
