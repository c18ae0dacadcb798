// The chat template conformance corpus: every template file of this folder, in one list.
import type { CorpusTemplate } from "./types.ts";
import commandRV01 from "./command_r_v01.ts";
import codellamaInstruct from "./codellama_instruct.ts";
import deepseekR1DistillQwen from "./deepseek_r1_distill_qwen.ts";
import gemma3It from "./gemma_3_it.ts";
import llama32Instruct from "./llama_3_2_instruct.ts";
import llama32VisionInstruct from "./llama_3_2_vision_instruct.ts";
import openchat35 from "./openchat_3_5.ts";
import phi4 from "./phi_4.ts";
import qwq32b from "./qwq_32b.ts";
import deepseekLlm7bChat from "./deepseek_llm_7b_chat.ts";
import deepseekR1 from "./deepseek_r1.ts";
import gemmaIt from "./gemma_it.ts";
import hermes2ProLlama38b from "./hermes_2_pro_llama_3_8b.ts";
import internlm2Chat7b from "./internlm2_chat_7b.ts";
import llama31Instruct from "./llama_3_1_instruct.ts";
import mistral7bInstructV03 from "./mistral_7b_instruct_v0_3.ts";
import mistralNemoInstruct2407 from "./mistral_nemo_instruct_2407.ts";
import mixtral8x7bInstructV01 from "./mixtral_8x7b_instruct_v0_1.ts";
import phi35MiniInstruct from "./phi_3_5_mini_instruct.ts";
import qwen25Instruct from "./qwen2_5_instruct.ts";
import qwen3 from "./qwen3.ts";
import smollm2Instruct from "./smollm2_instruct.ts";
import smollm33b from "./smollm3_3b.ts";
import zephyr7bBeta from "./zephyr_7b_beta.ts";

/** File name (in this folder) → template. */
export const CORPUS: Record<string, CorpusTemplate> = {
  "command_r_v01.ts": commandRV01,
  "deepseek_llm_7b_chat.ts": deepseekLlm7bChat,
  "deepseek_r1.ts": deepseekR1,
  "gemma_it.ts": gemmaIt,
  "hermes_2_pro_llama_3_8b.ts": hermes2ProLlama38b,
  "internlm2_chat_7b.ts": internlm2Chat7b,
  "llama_3_1_instruct.ts": llama31Instruct,
  "mistral_7b_instruct_v0_3.ts": mistral7bInstructV03,
  "mistral_nemo_instruct_2407.ts": mistralNemoInstruct2407,
  "mixtral_8x7b_instruct_v0_1.ts": mixtral8x7bInstructV01,
  "phi_3_5_mini_instruct.ts": phi35MiniInstruct,
  "qwen2_5_instruct.ts": qwen25Instruct,
  "qwen3.ts": qwen3,
  "smollm2_instruct.ts": smollm2Instruct,
  "smollm3_3b.ts": smollm33b,
  "zephyr_7b_beta.ts": zephyr7bBeta,
  "codellama_instruct.ts": codellamaInstruct,
  "deepseek_r1_distill_qwen.ts": deepseekR1DistillQwen,
  "gemma_3_it.ts": gemma3It,
  "llama_3_2_instruct.ts": llama32Instruct,
  "llama_3_2_vision_instruct.ts": llama32VisionInstruct,
  "openchat_3_5.ts": openchat35,
  "phi_4.ts": phi4,
  "qwq_32b.ts": qwq32b,
};
