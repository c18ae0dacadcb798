// `svc llm fine-tune` as a subprocess: dataset validation (with the demo/chat tokenizer, and the
// approximation without --allow-ffi), then jobs on the fine-tuning API stand-in.
import { join } from "node:path";
import { assert, assertEquals, assertMatch } from "../_assert.ts";
import { waitFor } from "../_helpers/wait.ts";
import { ModelRegistry } from "../../src/core/model_registry.ts";
import { startFineTuneStandIn } from "./_fine_tune_stand_in.ts";
import { runCli, withHome } from "./_run_cli.ts";

function perms(home: string, ffi = true): string[] {
  // Reading is broad: the dataset, and the tokenizer source demo/chat is generated from.
  return [
    "--allow-env",
    "--allow-read",
    `--allow-write=${home}`,
    "--allow-net=127.0.0.1",
    ...(ffi ? ["--allow-ffi", "--allow-sys"] : []),
  ];
}

function example(i: number): string {
  return JSON.stringify({
    messages: [
      { role: "system", content: "You answer briefly." },
      { role: "user", content: `What is ${i} plus ${i}?` },
      { role: "assistant", content: `${i + i}.` },
    ],
  });
}

async function writeDataset(home: string, name: string, lines: string[]): Promise<string> {
  const path = join(home, name);
  await Deno.writeTextFile(path, lines.join("\n") + "\n");
  return path;
}

Deno.test("svc llm fine-tune reports errors with line numbers and exits 65", async () => {
  await withHome(async (home) => {
    const dataset = await writeDataset(home, "bad.jsonl", [
      example(1),
      "{oops",
      JSON.stringify({ messages: [{ role: "user", content: "no reply" }] }),
      example(1),
    ]);
    const result = await runCli(
      ["llm", "fine-tune", "--base-model", "gpt-x", "--dataset", dataset],
      { perms: perms(home, false), home },
    );
    assertEquals(result.code, 65, result.stderr);
    assertMatch(result.stdout, /examples:\s+2 valid of 4/);
    assertMatch(result.stdout, /line 2: not valid JSON/);
    assertMatch(result.stdout, /line 3: no assistant message/);
    assertMatch(result.stdout, /duplicates:\s+1 \(line 4 = line 1\)/);
    assertMatch(result.stdout, /APPROXIMATE \(no local copy of gpt-x\)/);
    assertMatch(result.stderr, /^svc: the dataset has 2 errors/);
  });
});

Deno.test("svc llm fine-tune counts with the demo/chat tokenizer and stops without a provider (78)", async () => {
  await withHome(async (home) => {
    const dataset = await writeDataset(
      home,
      "train.jsonl",
      Array.from({ length: 12 }, (_, i) => example(i)),
    );
    const result = await runCli(
      ["llm", "fine-tune", "--base-model", "demo/chat", "--dataset", dataset],
      { perms: perms(home), home },
    );
    assertEquals(result.code, 78, result.stderr);
    assertMatch(result.stdout, /examples:\s+12 valid of 12/);
    assertMatch(result.stdout, /messages:\s+36 \(12 system, 12 user, 12 assistant\)/);
    assertMatch(result.stdout, /counted with the demo\/chat tokenizer and chat template/);
    assertMatch(result.stdout, /context:\s+2048 tokens; 0 examples longer/);
    assertMatch(result.stdout, /dataset OK/);
    assertMatch(result.stderr, /set COMPAT_BASE_URL and COMPAT_API_KEY/);
    assertEquals(result.stderr.trim().split("\n").length, 1);

    const only = await runCli(
      [
        "llm",
        "fine-tune",
        "--base-model",
        "demo/chat",
        "--dataset",
        dataset,
        "--validate-only",
        "--context",
        "20",
      ],
      { perms: perms(home, false), home },
    );
    assertEquals(only.code, 0, only.stderr);
    assertMatch(only.stdout, /APPROXIMATE \(run with --allow-ffi/);
    assertMatch(only.stdout, /context:\s+20 tokens; 12 examples longer/);
  });
});

Deno.test("svc llm fine-tune uploads, runs and follows the job, then registers the model", async () => {
  await using api = startFineTuneStandIn({ apiKey: "sk-ft", steps: 2 });
  await withHome(async (home) => {
    const train = await writeDataset(
      home,
      "train.jsonl",
      Array.from({ length: 10 }, (_, i) => example(i)),
    );
    const valid = await writeDataset(home, "valid.jsonl", [example(100), example(101)]);
    const result = await runCli([
      "llm",
      "fine-tune",
      "--base-model",
      "demo/chat",
      "--dataset",
      train,
      "--validation",
      valid,
      "--suffix",
      "adder",
      "--epochs",
      "3",
      "--output",
      "my-adder",
      "--poll-interval",
      "10",
    ], {
      perms: perms(home, false),
      home,
      env: { COMPAT_BASE_URL: api.baseUrl, COMPAT_API_KEY: "sk-ft" },
    });
    assertEquals(result.code, 0, result.stderr);
    // The upload: multipart, purpose fine-tune, the file's name and exact bytes, the key.
    assertEquals(api.files.map((f) => [f.filename, f.purpose]), [
      ["train.jsonl", "fine-tune"],
      ["valid.jsonl", "fine-tune"],
    ]);
    assertEquals(api.files[0].text, await Deno.readTextFile(train));
    assert(api.requests.every((r) => r.authorization === "Bearer sk-ft"));
    const [job] = [...api.jobs.values()];
    assertEquals(job.request, {
      model: "demo/chat",
      training_file: "file-1",
      validation_file: "file-2",
      suffix: "adder",
      hyperparameters: { n_epochs: 3 },
    });
    assertMatch(result.stdout, /created fine-tuning job ftjob-1/);
    assertMatch(result.stdout, /status: running/);
    assertMatch(result.stdout, /Step 2\/2: training loss=1\.00/);
    assertMatch(
      result.stdout,
      /fine-tuned model ft:demo\/chat:adder:ftjob-1 \(1234 trained tokens\)/,
    );
    const entry = await new ModelRegistry(join(home, "models", "registry.json")).get("my-adder");
    assertEquals(entry?.source, "fine-tune");
    assertEquals(entry?.path, join(home, "fine_tune", "my-adder"));
    const record = JSON.parse(await Deno.readTextFile(join(entry!.path, "job.json")));
    assertEquals(record.fine_tuned_model, "ft:demo/chat:adder:ftjob-1");
    assertEquals(record.provider, api.baseUrl);

    const show = await runCli(["llm", "model", "show", "my-adder"], {
      perms: ["--allow-env", `--allow-read=${home}`, `--allow-write=${home}`],
      home,
    });
    assertMatch(show.stdout, /remote model: ft:demo\/chat:adder:ftjob-1 \(job ftjob-1\)/);
  });
});

Deno.test("svc llm fine-tune: a failed job exits 69 with the provider's reason; a wrong key 77", async () => {
  await using api = startFineTuneStandIn({ apiKey: "sk-ft", steps: 1, failWith: "bad rows" });
  await withHome(async (home) => {
    const train = await writeDataset(
      home,
      "train.jsonl",
      Array.from({ length: 10 }, (_, i) => example(i)),
    );
    const args = [
      "llm",
      "fine-tune",
      "--base-model",
      "gpt-x",
      "--dataset",
      train,
      "--poll-interval",
      "10",
    ];
    const failed = await runCli(args, {
      perms: perms(home, false),
      home,
      env: { COMPAT_BASE_URL: api.baseUrl, COMPAT_API_KEY: "sk-ft" },
    });
    assertEquals(failed.code, 69, failed.stderr);
    assertMatch(failed.stderr, /fine-tuning job ftjob-1 failed: bad rows/);
    assertEquals(await new ModelRegistry(join(home, "models", "registry.json")).list(), []);

    const wrong = await runCli(args, {
      perms: perms(home, false),
      home,
      env: { COMPAT_BASE_URL: api.baseUrl, COMPAT_API_KEY: "nope" },
    });
    assertEquals(wrong.code, 77, wrong.stderr);
    assertMatch(wrong.stderr, /Incorrect API key provided.*COMPAT_API_KEY/);
  });
});

Deno.test("svc llm fine-tune: Ctrl-C cancels the job on the provider and exits 130", async () => {
  await using api = startFineTuneStandIn({ apiKey: "sk-ft", hang: true });
  await withHome(async (home) => {
    const train = await writeDataset(
      home,
      "train.jsonl",
      Array.from({ length: 10 }, (_, i) => example(i)),
    );
    const result = await runCli(
      ["llm", "fine-tune", "--base-model", "gpt-x", "--dataset", train, "--poll-interval", "10"],
      {
        perms: perms(home, false),
        home,
        env: { COMPAT_BASE_URL: api.baseUrl, COMPAT_API_KEY: "sk-ft" },
        onStart: (child, output) => {
          waitFor(() => output.stdout().includes("status: running"), { timeoutMs: 30_000 })
            .then(() => child.kill("SIGINT"), () => child.kill("SIGKILL"));
        },
      },
    );
    assertEquals(result.code, 130, result.stderr);
    assertMatch(result.stderr, /cancelled fine-tuning job ftjob-1/);
    assertEquals(api.jobs.get("ftjob-1")?.job.status, "cancelled");
    assert(api.requests.some((r) => r.method === "POST" && r.path.endsWith("/ftjob-1/cancel")));
    const record = JSON.parse(
      await Deno.readTextFile(join(home, "fine_tune", "ftjob-1", "job.json")),
    );
    assertEquals(record.status, "cancelled");
  });
});

Deno.test("svc llm fine-tune refuses an --output name that a non-fine-tune model has (75)", async () => {
  await using api = startFineTuneStandIn({ apiKey: "sk-ft" });
  await withHome(async (home) => {
    const registry = new ModelRegistry(join(home, "models", "registry.json"));
    await registry.register({ id: "org/base", path: join(home, "hub", "x"), source: "hub" });
    const train = await writeDataset(
      home,
      "train.jsonl",
      Array.from({ length: 10 }, (_, i) => example(i)),
    );
    const result = await runCli(
      ["llm", "fine-tune", "--base-model", "gpt-x", "--dataset", train, "--output", "org/base"],
      {
        perms: perms(home, false),
        home,
        env: { COMPAT_BASE_URL: api.baseUrl, COMPAT_API_KEY: "sk-ft" },
      },
    );
    assertEquals(result.code, 75, result.stderr);
    assertMatch(result.stderr, /already a registered hub model/);
    assertEquals(api.requests.length, 0, "nothing uploaded");
  });
});
