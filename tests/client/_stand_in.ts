// Small OpenAI-compatible stand-in servers on free loopback ports, recording what they receive.
import { join } from "node:path";
import { tmpdir } from "node:os";
import { setupLogger } from "../../src/core/logging.ts";

setupLogger("error");

/** SVC_HOME of engine processes a test gateway starts (shared with the gateway tests' cache). */
export const CHILD_HOME: string = join(tmpdir(), "svc-test-home");

/** Detection settings that never probe the real SvcPorts addresses. */
export const NO_LOCAL = {
  env: {},
  envFile: null,
  gatewayPort: null,
  llmPorts: [] as number[],
  embeddingPort: null,
  serveState: null,
} as const;

/** A request as the stand-in saw it. */
export interface SeenRequest {
  method: string;
  path: string;
  authorization: string | null;
  body: unknown;
}

/** A running stand-in. */
export interface StandIn {
  port: number;
  /** `http://127.0.0.1:port/v1`. */
  baseUrl: string;
  seen: SeenRequest[];
  close(): Promise<void>;
}

/** Serves `handler` on a free port; every request is recorded (JSON bodies parsed). */
export function standIn(
  handler: (req: Request, seen: SeenRequest) => Response | Promise<Response>,
): StandIn {
  const seen: SeenRequest[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const text = req.method === "POST" ? await req.text() : "";
    let body: unknown = text;
    try {
      body = text === "" ? null : JSON.parse(text);
    } catch {
      // keep the text
    }
    const entry: SeenRequest = {
      method: req.method,
      path: new URL(req.url).pathname,
      authorization: req.headers.get("authorization"),
      body,
    };
    seen.push(entry);
    return await handler(req, entry);
  });
  const port = server.addr.port;
  return {
    port,
    baseUrl: `http://127.0.0.1:${port}/v1`,
    seen,
    close: () => server.shutdown(),
  };
}

/** A `/v1/models` answer. */
export function modelList(models: { id: string; kind?: string }[]): Response {
  return Response.json({
    object: "list",
    data: models.map((m) => ({ object: "model", created: 0, owned_by: "t", ...m })),
  });
}

/** A minimal chat completion answer. */
export function chatAnswer(model: string, content: string): Response {
  return Response.json({
    id: "chatcmpl-1",
    object: "chat.completion",
    created: 0,
    model,
    system_fingerprint: null,
    choices: [{
      index: 0,
      message: { role: "assistant", content, refusal: null },
      logprobs: null,
      finish_reason: "stop",
    }],
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
  });
}

/** An OpenAI error answer. */
export function errorAnswer(
  status: number,
  message: string,
  extra: { code?: string; type?: string; param?: string; headers?: Record<string, string> } = {},
): Response {
  return Response.json({
    error: {
      message,
      type: extra.type ?? "invalid_request_error",
      param: extra.param ?? null,
      code: extra.code ?? null,
    },
  }, { status, headers: extra.headers });
}

/** A free loopback port that nothing listens on (closed again at once). */
export function closedPort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}
