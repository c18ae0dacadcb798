// What a client's endpoints list (`/models`): the model a call names when none is set, the
// reranker, and each endpoint's part of `status()`.
import { ConfigurationError } from "../core/errors.ts";
import type { EngineKind } from "../core/model_kind.ts";
import { type Endpoint, info } from "./_client_setup.ts";
import type { ClientHttp, FetchLike, HttpTarget } from "./_http.ts";
import { firstOfKind, firstReranker, listedModels } from "./_wire.ts";
import { probeService } from "./detect_endpoints.ts";
import type { EndpointStatus } from "./types.ts";

/** The first model of `kind` the endpoint lists; none is a ConfigurationError (`no_model`). */
export async function listedModelOf(
  http: ClientHttp,
  target: HttpTarget,
  kind: EngineKind,
  signal: AbortSignal | undefined,
): Promise<string> {
  const answer = await http.json<unknown>(target, "/models", { signal });
  const found = firstOfKind(listedModels(answer), kind);
  if (found === null) {
    const variable = kind === "chat" ? "SVC_CHAT_MODEL (or llmModel)" : "SVC_EMBEDDING_MODEL " +
      "(or embeddingModel)";
    throw new ConfigurationError(
      `${target.baseUrl}/models lists no ${kind} model; set ${variable} to the model to use`,
      { code: "no_model", param: kind === "chat" ? "SVC_CHAT_MODEL" : "SVC_EMBEDDING_MODEL" },
    );
  }
  return found;
}

/** The first reranker the endpoint lists; none is a ConfigurationError (`no_model`). */
export async function listedRerankerOf(
  http: ClientHttp,
  target: HttpTarget,
  embedded: boolean,
  signal: AbortSignal | undefined,
): Promise<string> {
  const answer = await http.json<unknown>(target, "/models", { signal });
  const found = firstReranker(listedModels(answer));
  if (found === null) {
    // In embedded mode no server is involved: the reranker is loaded in this process or not at all.
    throw new ConfigurationError(
      embedded
        ? "the embedded control plane serves no reranker; load one in this process with " +
          'create({ embedded: { rerankModel: "<hub id or folder>" } }) (e.g. ' +
          "Xenova/ms-marco-MiniLM-L-6-v2, or demo/rerank with random weights)"
        : `${target.baseUrl}/models lists no reranker; serve one (svc llm serve ` +
          `--with-embedding) or pass the model (rerankModel, or the model option)`,
      { code: "no_model", param: "rerankModel" },
    );
  }
  return found;
}

/** Probes one endpoint now (nothing is available once the client is closed). */
export async function endpointStatus(
  e: Endpoint,
  kind: EngineKind,
  closed: boolean,
  probe: { probeTimeoutMs: number; fetch?: FetchLike },
): Promise<EndpointStatus> {
  if (e.baseUrl === null || closed) {
    return {
      ...info(e),
      available: false,
      models: [],
      randomWeights: [],
      detail: closed ? "the client is closed" : "no endpoint configured",
    };
  }
  const seen = await probeService(e.baseUrl, e.apiKey, probe);
  // Only the endpoint's kind: a gateway lists every model (rerankers with the embeddings).
  const serves = kind === "chat" ? ["chat"] : ["embedding", "rerank"];
  const models = seen.models.filter((m) => serves.includes(m.kind));
  return {
    ...info(e),
    // The model calls would use: the one set, else the first of its kind listed.
    model: e.model ?? firstOfKind(models, kind),
    available: seen.answered,
    models: models.map((m) => m.id),
    randomWeights: models.filter((m) => m.randomWeights).map((m) => m.id),
    detail: seen.detail,
  };
}
