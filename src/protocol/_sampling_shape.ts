// The zod shape of `WireSamplingFields`, spread into the chat and completion schemas. Kept out of
// the public API: zod's inferred types are not explicit types.
import { z } from "zod";
import { MAX_STOP_SEQUENCES } from "./sampling.ts";

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
  stream_options: z.object({ include_usage: z.boolean().nullish() }).nullish(),
  user: z.string().nullish(),
};
