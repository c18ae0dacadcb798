// The zod shape of `WireSamplingFields`, spread into the chat and completion schemas. Kept out of
// the public API: zod's inferred types are not explicit types.
import { z } from "zod";
import { MAX_LOGIT_BIAS, MAX_STOP_SEQUENCES } from "./sampling.ts";

const penalty = z.number().min(-2).max(2).nullish();

export const SAMPLING_SHAPE = {
  temperature: z.number().min(0).max(2).nullish(),
  top_p: z.number().min(0).max(1).nullish(),
  // -1 is vLLM's spelling of "no top-k cut"; 0 is ours.
  top_k: z.int().min(-1).nullish(),
  seed: z.int().nullish(),
  max_tokens: z.int().min(1).nullish(),
  stop: z.union([
    z.string(),
    z.array(z.string()).max(MAX_STOP_SEQUENCES, {
      error: `at most ${MAX_STOP_SEQUENCES} stop sequences are allowed`,
    }),
  ]).nullish(),
  // Upper bounds of n (and of top_logprobs, embedding inputs) are the engine's limits, which it
  // checks itself: a gateway in front must not refuse what the engine was configured to allow.
  n: z.int().min(1).nullish(),
  presence_penalty: penalty,
  frequency_penalty: penalty,
  repetition_penalty: z.number().gt(0).nullish(),
  stream: z.boolean().nullish(),
  stream_options: z.object({
    include_usage: z.boolean().nullish(),
    continuous_usage_stats: z.boolean().nullish(),
  }).nullish(),
  user: z.string().nullish(),
  logit_bias: z.record(
    z.string().regex(/^\d+$/, { error: "logit_bias keys are token ids (whole numbers as text)" }),
    z.number().min(-100).max(100),
  ).refine((v) => Object.keys(v).length <= MAX_LOGIT_BIAS, {
    error: `logit_bias may hold at most ${MAX_LOGIT_BIAS} tokens`,
  }).nullish(),
  // vLLM's extra sampling fields.
  min_p: z.number().min(0).max(1).nullish(),
  min_tokens: z.int().min(0).nullish(),
  ignore_eos: z.boolean().nullish(),
  stop_token_ids: z.array(z.int().min(0)).max(MAX_LOGIT_BIAS).nullish(),
  include_stop_str_in_output: z.boolean().nullish(),
  skip_special_tokens: z.boolean().nullish(),
  spaces_between_special_tokens: z.boolean().nullish(), // accepted; the tokenizer decides
};
