import { assert, assertEquals, assertMatch, assertRejects } from "../_assert.ts";
import {
  FineTuningClient,
  type FineTuningEvent,
  followJob,
} from "../../src/cli/fine_tuning_client.ts";
import {
  AuthenticationError,
  CancelledError,
  NotFoundError,
  ValidationError,
} from "../../src/core/errors.ts";
import { startFineTuneStandIn } from "./_fine_tune_stand_in.ts";

const DATA = '{"messages":[{"role":"user","content":"Hi"},{"role":"assistant","content":"Yo"}]}\n';

Deno.test("FineTuningClient uploads multipart files, creates a job and followJob() reports it to the end", async () => {
  await using api = startFineTuneStandIn({ apiKey: "sk-test", steps: 2 });
  const client = new FineTuningClient({ baseUrl: api.baseUrl, apiKey: "sk-test" });
  const file = await client.uploadFile("train.jsonl", DATA);
  assertEquals(file.id, "file-1");
  assertEquals(api.files[0].filename, "train.jsonl");
  assertEquals(api.files[0].purpose, "fine-tune");
  assertEquals(api.files[0].text, DATA);
  const job = await client.createJob({
    model: "base-model",
    training_file: file.id,
    suffix: "mine",
    hyperparameters: { n_epochs: 2 },
  });
  assertEquals(job.status, "validating_files");
  assertEquals(api.jobs.get(job.id)?.request.hyperparameters, { n_epochs: 2 });

  const events: FineTuningEvent[] = [];
  const statuses: string[] = [];
  const final = await followJob(client, job.id, {
    pollMs: 1,
    onEvent: (e) => events.push(e),
    onStatus: (j) => statuses.push(j.status),
  });
  assertEquals(final.status, "succeeded");
  assertEquals(final.fine_tuned_model, `ft:base-model:mine:${job.id}`);
  assertEquals(statuses, ["validating_files", "queued", "running", "succeeded"]);
  const messages = events.map((e) => e.message);
  assertEquals(messages[0], `Created fine-tuning job: ${job.id}`, "oldest first");
  assertEquals(new Set(events.map((e) => e.id)).size, events.length, "each event once");
  assert(messages.includes("Step 2/2: training loss=1.00"));
  assertEquals(messages.at(-1), "The job has successfully completed");
  assert(api.requests.every((r) => r.authorization === "Bearer sk-test"));
});

Deno.test("FineTuningClient maps error answers to typed errors with the provider's message", async () => {
  await using api = startFineTuneStandIn({ apiKey: "right" });
  const wrong = new FineTuningClient({ baseUrl: api.baseUrl, apiKey: "wrong" });
  const auth = await assertRejects(() => wrong.getJob("x"), AuthenticationError);
  assertMatch(auth.message, /Incorrect API key provided.*COMPAT_API_KEY/);
  const client = new FineTuningClient({ baseUrl: api.baseUrl, apiKey: "right" });
  const missing = await assertRejects(() => client.getJob("ftjob-404"), NotFoundError);
  assertMatch(missing.message, /No such fine-tuning job: ftjob-404/);
  await assertRejects(
    () => client.createJob({ model: "m", training_file: "file-none" }),
    ValidationError,
  );
});

Deno.test("followJob() rides out transient 503s and stops with CancelledError when aborted", async () => {
  await using api = startFineTuneStandIn({ apiKey: "k", fail503: 2, hang: true });
  const client = new FineTuningClient({ baseUrl: api.baseUrl, apiKey: "k" });
  const file = await client.uploadFile("t.jsonl", DATA);
  const job = await client.createJob({ model: "m", training_file: file.id });
  const stop = new AbortController();
  const following = followJob(client, job.id, {
    pollMs: 1,
    signal: stop.signal,
    onStatus: (j) => {
      if (j.status === "running") stop.abort();
    },
  });
  await assertRejects(() => following, CancelledError);
  const cancelled = await client.cancelJob(job.id);
  assertEquals(cancelled.status, "cancelled");
  assertEquals(api.requests.at(-1)?.path, `/v1/fine_tuning/jobs/${job.id}/cancel`);
});
