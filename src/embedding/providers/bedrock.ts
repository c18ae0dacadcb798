/**
 * `bedrock`: Amazon Titan text embeddings on AWS Bedrock. InvokeModel:
 * `POST {baseUrl}/model/{modelId}/invoke` with `{"inputText": text}` (v2 adds `dimensions` and
 * `normalize`), answer `{"embedding": [...], "inputTextTokenCount": n}`; one text per request,
 * four in flight. Requests are SigV4-signed (service `bedrock`) with AWS_ACCESS_KEY_ID,
 * AWS_SECRET_ACCESS_KEY, optional AWS_SESSION_TOKEN, in AWS_REGION (or AWS_DEFAULT_REGION).
 * The base URL defaults to `https://bedrock-runtime.{region}.amazonaws.com`.
 *
 * @module
 */

import { ConfigurationError, ValidationError } from "../../core/errors.ts";
import { BaseEmbedder } from "../_base_embedder.ts";
import { joinUrl } from "../../core/fetch_with_timeout.ts";
import { postJson } from "../_http.ts";
import { requireKey, resolveSetting } from "../_settings.ts";
import { checkVectors } from "../_vector.ts";
import type {
  BaseEmbedderOptions,
  BedrockOptions,
  Embedder,
  EmbeddingMethodInfo,
} from "../types.ts";
import { checkDimensions, knownDimensions } from "./_catalog_util.ts";
import { type AwsCredentials, signAwsRequest, uriEncode } from "./_sigv4.ts";

/** Static facts of the `bedrock` method. */
export const BEDROCK_PROVIDER: EmbeddingMethodInfo = Object.freeze({
  method: "bedrock",
  description: "AWS Bedrock Titan text embeddings (InvokeModel, SigV4)",
  models: [
    {
      name: "amazon.titan-embed-text-v2:0",
      dimensions: 1024,
      supportedDimensions: [256, 512, 1024],
    },
    { name: "amazon.titan-embed-text-v1", dimensions: 1536 },
  ],
  defaultModel: "amazon.titan-embed-text-v2:0",
  defaultDimensions: 1024,
  needsKey: true,
  envVariable: "AWS_ACCESS_KEY_ID",
  envVariables: [
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_REGION",
    "AWS_DEFAULT_REGION",
  ],
  defaultBaseUrl: "https://bedrock-runtime.{region}.amazonaws.com",
  local: false,
});

/** Options of {@link createBedrockEmbedder}. */
export type BedrockEmbedderOptions = BaseEmbedderOptions & BedrockOptions;

const KEY_VARIABLES = "AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY";

class BedrockEmbedder extends BaseEmbedder {
  readonly #url: string;
  readonly #region: string;
  readonly #credentials: AwsCredentials;
  readonly #extra: Record<string, unknown>;
  readonly #options: BedrockEmbedderOptions;

  constructor(
    model: string,
    region: string,
    credentials: AwsCredentials,
    options: BedrockEmbedderOptions,
  ) {
    const dimensions = checkDimensions(options.dimensions);
    super("bedrock", model, {
      dimensions: dimensions ?? knownDimensions(BEDROCK_PROVIDER, model),
      maxBatchSize: 1,
      concurrency: 4,
    });
    const base = options.baseUrl ?? `https://bedrock-runtime.${region}.amazonaws.com`;
    this.#url = joinUrl(base, `model/${uriEncode(model)}/invoke`);
    this.#region = region;
    this.#credentials = credentials;
    this.#options = options;
    // Titan v1 takes inputText only; v2 shortens and normalizes.
    const v1 = /titan-embed-(text-v1|g1-text)/.test(model);
    if (v1 && dimensions !== undefined) {
      throw new ValidationError(`${model} has a fixed size; leave out dimensions`, {
        param: "dimensions",
      });
    }
    this.#extra = v1 ? {} : {
      ...(dimensions !== undefined ? { dimensions } : {}),
      normalize: options.normalize ?? true,
    };
  }

  protected async embedChunk(texts: string[]): Promise<number[][]> {
    const body = JSON.stringify({ inputText: texts[0], ...this.#extra });
    const headers = await signAwsRequest({
      method: "POST",
      url: this.#url,
      headers: { "content-type": "application/json", accept: "application/json" },
      body,
      region: this.#region,
      service: "bedrock",
      credentials: this.#credentials,
    });
    const json = await postJson(this.#url, body, {
      provider: "AWS Bedrock",
      keyVariable: KEY_VARIABLES,
      headers,
      timeoutMs: this.#options.timeoutMs,
      fetch: this.#options.fetch,
    });
    return checkVectors([(json as { embedding?: unknown } | null)?.embedding], 1, "AWS Bedrock");
  }
}

/**
 * Creates a `bedrock` embedder.
 *
 * @example
 * ```ts
 * import { createBedrockEmbedder } from "./bedrock.ts";
 * const embedder = createBedrockEmbedder({ region: "us-east-1", dimensions: 512 });
 * const vector = await embedder.embed("hello"); // AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY set
 * ```
 */
export function createBedrockEmbedder(options: BedrockEmbedderOptions = {}): Embedder {
  const env = options.env;
  const provider = "AWS Bedrock";
  const accessKeyId = requireKey(options.accessKeyId, "AWS_ACCESS_KEY_ID", {
    provider,
    env,
    option: "accessKeyId",
  });
  const secretAccessKey = requireKey(options.secretAccessKey, "AWS_SECRET_ACCESS_KEY", {
    provider,
    env,
    option: "secretAccessKey",
  });
  const sessionToken = resolveSetting(options.sessionToken, "AWS_SESSION_TOKEN", env);
  const region = resolveSetting(options.region, "AWS_REGION", env) ??
    resolveSetting(undefined, "AWS_DEFAULT_REGION", env);
  if (region === undefined) {
    throw new ConfigurationError(
      "AWS Bedrock needs a region: set AWS_REGION (e.g. us-east-1) or pass the region option",
      { param: "AWS_REGION", code: "missing_region" },
    );
  }
  return new BedrockEmbedder(
    options.model ?? BEDROCK_PROVIDER.defaultModel,
    region,
    { accessKeyId, secretAccessKey, sessionToken },
    options,
  );
}
