// A local stand-in for an OpenAI-compatible fine-tuning API, for tests: `POST /v1/files`
// (multipart), `POST /v1/fine_tuning/jobs`, `GET /v1/fine_tuning/jobs/{id}`, its `/events`
// (newest first) and `POST .../cancel`, with OpenAI's shapes and error bodies. Every route checks
// `Authorization: Bearer <apiKey>`. A job advances one step per `GET` of the job:
// validating_files → queued → running (one metrics event per step) → succeeded (or failed).

/** How jobs behave. */
export interface StandInBehaviour {
  /** Training steps before the job ends; default 3. */
  steps?: number;
  /** End in `failed` with this message instead of succeeding. */
  failWith?: string;
  /** Stay `running` forever (for cancel tests). */
  hang?: boolean;
  /** Answer the next this-many job GETs with 503 (transient faults). */
  fail503?: number;
}

/** An uploaded file as the stand-in stored it. */
export interface StoredFile {
  id: string;
  filename: string;
  purpose: string;
  contentType: string;
  text: string;
}

/** A job as the stand-in keeps it. */
export interface StoredJob {
  request: Record<string, unknown>;
  job: Record<string, unknown>;
  events: Record<string, unknown>[];
  gets: number;
  step: number;
}

/** A running stand-in. */
export interface FineTuneStandIn {
  /** Base URL ending in /v1. */
  baseUrl: string;
  files: StoredFile[];
  jobs: Map<string, StoredJob>;
  /** Every request: method, path, authorization header. */
  requests: { method: string; path: string; authorization: string | null }[];
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** Starts the stand-in on 127.0.0.1, port 0. */
export function startFineTuneStandIn(
  options: { apiKey: string } & StandInBehaviour,
): FineTuneStandIn {
  const files: StoredFile[] = [];
  const jobs = new Map<string, StoredJob>();
  const requests: FineTuneStandIn["requests"] = [];
  let fail503 = options.fail503 ?? 0;
  let clock = 1_700_000_000;
  const now = () => ++clock;
  const error = (status: number, message: string, code: string | null = null) =>
    Response.json(
      { error: { message, type: "invalid_request_error", param: null, code } },
      { status },
    );
  const event = (stored: StoredJob, message: string, data: unknown = null, type = "message") => {
    stored.events.push({
      object: "fine_tuning.job.event",
      id: `ftevent-${stored.events.length + 1}`,
      created_at: now(),
      level: "info",
      message,
      data,
      type,
    });
  };

  const advance = (stored: StoredJob) => {
    const job = stored.job;
    const steps = options.steps ?? 3;
    switch (job.status) {
      case "validating_files":
        job.status = "queued";
        event(stored, "Files validated, moving job to queued state");
        break;
      case "queued":
        job.status = "running";
        event(stored, "Fine-tuning job started");
        break;
      case "running":
        if (options.hang) break;
        if (stored.step < steps) {
          stored.step++;
          event(
            stored,
            `Step ${stored.step}/${steps}: training loss=${(2 / stored.step).toFixed(2)}`,
            {
              step: stored.step,
              total_steps: steps,
              train_loss: 2 / stored.step,
            },
            "metrics",
          );
          break;
        }
        job.finished_at = now();
        if (options.failWith) {
          job.status = "failed";
          job.error = { code: "invalid_training_file", message: options.failWith, param: null };
          event(stored, `Job failed: ${options.failWith}`);
        } else {
          job.status = "succeeded";
          job.fine_tuned_model = `ft:${job.model}:${job.suffix ?? "custom"}:${job.id}`;
          job.trained_tokens = 1234;
          event(stored, "The job has successfully completed");
        }
    }
  };

  const route = async (req: Request, path: string): Promise<Response> => {
    if (req.headers.get("authorization") !== `Bearer ${options.apiKey}`) {
      return error(401, "Incorrect API key provided.", "invalid_api_key");
    }
    if (req.method === "POST" && path === "/v1/files") {
      const form = await req.formData().catch(() => null);
      if (!form) return error(400, "expected a multipart/form-data body");
      const purpose = form.get("purpose");
      const file = form.get("file");
      if (purpose !== "fine-tune") return error(400, `invalid purpose ${purpose}`);
      if (!(file instanceof File)) return error(400, "missing 'file' part");
      const stored = {
        id: `file-${files.length + 1}`,
        filename: file.name,
        purpose,
        contentType: file.type,
        text: await file.text(),
      };
      files.push(stored);
      return Response.json({
        id: stored.id,
        object: "file",
        bytes: file.size,
        created_at: now(),
        filename: file.name,
        purpose,
        status: "processed",
      });
    }
    if (req.method === "POST" && path === "/v1/fine_tuning/jobs") {
      const body = await req.json().catch(() => null) as Record<string, unknown> | null;
      if (!body || typeof body.model !== "string") return error(400, "'model' is required");
      for (const key of ["training_file", "validation_file"]) {
        if (body[key] !== undefined && !files.some((f) => f.id === body[key])) {
          return error(400, `invalid ${key}: no file ${body[key]}`, "invalid_file");
        }
      }
      if (body.training_file === undefined) return error(400, "'training_file' is required");
      const id = `ftjob-${jobs.size + 1}`;
      const job: Record<string, unknown> = {
        object: "fine_tuning.job",
        id,
        model: body.model,
        suffix: body.suffix ?? null,
        created_at: now(),
        finished_at: null,
        fine_tuned_model: null,
        status: "validating_files",
        training_file: body.training_file,
        validation_file: body.validation_file ?? null,
        hyperparameters: { n_epochs: "auto", ...(body.hyperparameters as object ?? {}) },
        trained_tokens: null,
        error: null,
      };
      const stored: StoredJob = { request: body, job, events: [], gets: 0, step: 0 };
      event(stored, `Created fine-tuning job: ${id}`);
      jobs.set(id, stored);
      return Response.json(job);
    }
    const match = /^\/v1\/fine_tuning\/jobs\/([^/]+)(\/events|\/cancel)?$/.exec(path);
    const stored = match ? jobs.get(match[1]) : undefined;
    if (match && !stored) return error(404, `No such fine-tuning job: ${match[1]}`);
    if (stored && req.method === "GET" && match![2] === undefined) {
      if (fail503 > 0) {
        fail503--;
        return error(503, "The server is overloaded, try again", "overloaded");
      }
      stored.gets++;
      if (stored.gets > 1) advance(stored);
      return Response.json(stored.job);
    }
    if (stored && req.method === "GET" && match![2] === "/events") {
      const limit = Number(new URL(req.url).searchParams.get("limit") ?? 20);
      const newestFirst = [...stored.events].reverse();
      return Response.json({
        object: "list",
        data: newestFirst.slice(0, limit),
        has_more: newestFirst.length > limit,
      });
    }
    if (stored && req.method === "POST" && match![2] === "/cancel") {
      if (["succeeded", "failed", "cancelled"].includes(stored.job.status as string)) {
        return error(400, `Job ${stored.job.id} has already ended`);
      }
      stored.job.status = "cancelled";
      stored.job.finished_at = now();
      event(stored, "Job cancelled");
      return Response.json(stored.job);
    }
    return error(404, `Invalid URL (${req.method} ${path})`);
  };

  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
    const path = new URL(req.url).pathname;
    requests.push({ method: req.method, path, authorization: req.headers.get("authorization") });
    return route(req, path);
  });
  const close = () => server.shutdown();
  return {
    baseUrl: `http://127.0.0.1:${server.addr.port}/v1`,
    files,
    jobs,
    requests,
    close,
    [Symbol.asyncDispose]: close,
  };
}
