import { ValidationError } from "../../src/core/errors.ts";
import {
  completionSamplingParams,
  parseCompletionRequest,
  toCompletionJob,
  toPromptInputs,
} from "../../src/protocol/completion_request.ts";
import { assertEquals, assertThrows } from "../_assert.ts";

function rejects(body: unknown, param: string | null, includes?: string): void {
  const err = assertThrows(() => parseCompletionRequest(body), ValidationError, includes);
  assertEquals(err.param, param);
}

Deno.test("toPromptInputs() accepts a string, strings, token ids and lists of token ids", () => {
  const cases: [unknown, unknown][] = [
    ["hi", [{ prompt: "hi" }]],
    [["a", "b"], [{ prompt: "a" }, { prompt: "b" }]],
    [[1, 2, 3], [{ tokenIds: [1, 2, 3] }]],
    [[[1], [2, 3]], [{ tokenIds: [1] }, { tokenIds: [2, 3] }]],
  ];
  for (const [prompt, expected] of cases) {
    const req = parseCompletionRequest({ model: "m", prompt });
    assertEquals(toPromptInputs(req.prompt) as unknown, expected);
  }
});

Deno.test("parseCompletionRequest() rejects bad prompts with a path", () => {
  rejects({ model: "m" }, "prompt", "Missing required parameter");
  rejects({ model: "m", prompt: [] }, "prompt");
  rejects({ model: "m", prompt: 5 }, "prompt");
  rejects({ model: "m", prompt: ["a", 1] }, "prompt.1");
  rejects({ model: "m", prompt: [1, -2] }, "prompt.1");
  rejects({ model: "m", prompt: [[1], []] }, "prompt.1");
});

Deno.test("parseCompletionRequest() takes echo with logprobs and max_tokens 0 with echo; refuses suffix and best_of other than n", () => {
  // echo of token ids is done (the route decodes them): toCompletionJob keeps the ids.
  assertEquals(
    toCompletionJob(parseCompletionRequest({ model: "m", prompt: [[1, 2], [3]], echo: true }))
      .echo,
    [[1, 2], [3]],
  );
  // echo with logprobs (the prompt's log-probabilities), with max_tokens 0 too; 0 without echo is not.
  const scored = toCompletionJob(
    parseCompletionRequest({ model: "m", prompt: "x", echo: true, logprobs: 2, max_tokens: 0 }),
  );
  assertEquals([scored.echoLogprobs, scored.params.maxTokens], [2, 0]);
  assertEquals(
    toCompletionJob(parseCompletionRequest({ model: "m", prompt: "x" })).echoLogprobs,
    undefined,
  );
  rejects({ model: "m", prompt: "x", max_tokens: 0 }, "max_tokens", "echo");
  rejects({ model: "m", prompt: "x", echo: true, max_tokens: -1 }, "max_tokens");
  rejects({ model: "m", prompt: "x", suffix: "tail" }, "suffix", "suffix");
  rejects({ model: "m", prompt: "x", best_of: 3 }, "best_of");
  rejects({ model: "m", prompt: "x", logprobs: true }, "logprobs");
  const ok = parseCompletionRequest({
    model: "m",
    prompt: "x",
    echo: false,
    suffix: null,
    best_of: 2,
    n: 2,
  });
  assertEquals(ok.n, 2);
});

Deno.test("completionSamplingParams() defaults max_tokens to 16 and maps legacy logprobs", () => {
  assertEquals(completionSamplingParams(parseCompletionRequest({ model: "m", prompt: "x" })), {
    maxTokens: 16,
  });
  const req = parseCompletionRequest({
    model: "m",
    prompt: "x",
    max_tokens: 5,
    logprobs: 2,
    temperature: 0,
    stop: ["a"],
    seed: 1,
  });
  assertEquals(completionSamplingParams(req), {
    maxTokens: 5,
    temperature: 0,
    seed: 1,
    stop: ["a"],
    logprobs: true,
    topLogprobs: 2,
  });
  const zero = parseCompletionRequest({ model: "m", prompt: "x", logprobs: 0 });
  assertEquals(completionSamplingParams(zero), { maxTokens: 16, logprobs: true });
});

Deno.test("toCompletionJob() gathers prompts, params and whether to send top_logprobs", () => {
  const job = toCompletionJob(parseCompletionRequest({
    model: "m",
    prompt: ["a", "b"],
    n: 3,
    logprobs: 2,
    stream: true,
  }));
  assertEquals(job, {
    model: "m",
    prompts: [{ prompt: "a" }, { prompt: "b" }],
    params: { maxTokens: 16, logprobs: true, topLogprobs: 2 },
    n: 3,
    stream: true,
    includeUsage: false,
    withTopLogprobs: true,
  });
  // logprobs 0 still sends top_logprobs: the sampled token's own (as OpenAI and vLLM do).
  assertEquals(
    toCompletionJob(parseCompletionRequest({ model: "m", prompt: "x", logprobs: 0 }))
      .withTopLogprobs,
    true,
  );
  assertEquals(
    toCompletionJob(parseCompletionRequest({ model: "m", prompt: "x" })).withTopLogprobs,
    false,
  );
});

Deno.test("parseCompletionRequest() refuses a field it does not know, naming it", () => {
  rejects(
    { ...{ model: "m", prompt: "x" }, frobnicate: { "1": 2 } },
    "frobnicate",
    "'frobnicate' is not supported",
  );
});
