// /v1/responses on the engine app over a fake engine: the same text as the chat path, and a
// stream the client leaves stops the generation.
import { get, post } from "../_helpers/http.ts";
import { waitFor } from "../_helpers/wait.ts";
import { assert, assertEquals, assertMatch } from "../_assert.ts";
import { type Json, setup, USER } from "../server/_engine_app_setup.ts";
import { setupLogger } from "../../src/core/logging.ts";
import { STORE_WARNING_HEADER } from "../../src/responses/responses_route.ts";

Deno.test("responses: the output is the chat path's answer to the same messages", async () => {
  const { app } = setup();
  const body = { model: "fake/chat", seed: 5, temperature: 1 };
  const chat: Json = await (await post(app, "/v1/chat/completions", { ...body, messages: USER }))
    .json();
  const res = await post(app, "/v1/responses", { ...body, input: USER[0].content });
  assertEquals(res.status, 200);
  const response: Json = await res.json();
  assertEquals(response.output[0].content[0].text, chat.choices[0].message.content);
  assertEquals(response.usage.input_tokens, chat.usage.prompt_tokens);
  assertEquals(response.usage.output_tokens, chat.usage.completion_tokens);
});

Deno.test("responses: cancelling the stream aborts the generation", async () => {
  const { app, chat } = setup({ tokenDelayMs: 20, eosAfter: 1000, contextLength: 5000 });
  const res = await post(app, "/v1/responses", {
    model: "fake/chat",
    input: "hello there",
    stream: true,
  });
  assertEquals(res.headers.get("content-type"), "text/event-stream; charset=utf-8");
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  const first = decoder.decode((await reader.read()).value);
  assertMatch(first, /^event: response\.created\ndata: \{"type":"response\.created"/);
  // Read until the first token came: the engine is generating.
  while (!decoder.decode((await reader.read()).value).includes("response.output_text.delta"));
  assertEquals(chat.running, 1);
  await reader.cancel();
  await waitFor(() => chat.aborted === 1, { what: "the fake engine to see the abort" });
  assertEquals(chat.running, 0);
});

Deno.test("responses: an unknown URL's 404 lists the endpoints, /v1/responses among them", async () => {
  const { app } = setup();
  const res = await post(app, "/v1/respond", { model: "fake/chat", input: "hi" });
  assertEquals(res.status, 404);
  const { error }: Json = await res.json();
  assertMatch(error.message, /POST \/v1\/respond\)/);
  assertMatch(error.message, /POST \/v1\/responses, GET \/v1\/responses\/\{id\}/);
});

Deno.test("responses: input_items pages the input as items (limit, after, order)", async () => {
  const { app } = setup();
  const first: Json = await (await post(app, "/v1/responses", {
    model: "fake/chat",
    input: "hello there",
    max_output_tokens: 2,
  })).json();
  const res = await post(app, "/v1/responses", {
    model: "fake/chat",
    previous_response_id: first.id,
    max_output_tokens: 2,
    input: [
      { role: "developer", content: "Be brief." },
      { role: "user", content: [{ type: "input_text", text: "one" }], id: "msg_mine" },
      { role: "assistant", content: "two" },
      { type: "function_call", call_id: "c1", name: "f", arguments: "{}" },
      { type: "function_call_output", call_id: "c1", output: "42" },
      { type: "item_reference", id: first.output[0].id },
    ],
  });
  assertEquals(res.status, 200);
  const { id }: Json = await res.json();
  const list = async (query = "") => {
    const res = await get(app, `/v1/responses/${id}/input_items${query}`);
    assertEquals(res.status, 200);
    return (await res.json()) as Json;
  };
  const all = await list("?order=asc&include[]=message.input_image.image_url");
  assertEquals(all.object, "list");
  assertEquals(all.has_more, false);
  // Only this turn's input (the chained first turn is not listed), each item with an id.
  assertEquals(all.data.map((i: Json) => [i.type, i.role ?? i.call_id]), [
    ["message", "developer"],
    ["message", "user"],
    ["message", "assistant"],
    ["function_call", "c1"],
    ["function_call_output", "c1"],
    ["message", "assistant"],
  ]);
  assertEquals(all.data[0].content, [{ type: "input_text", text: "Be brief." }]);
  assertEquals(all.data[1].id, "msg_mine");
  assertEquals(all.data[2].content[0].type, "output_text");
  assertEquals(all.data[4].output, "42");
  assertEquals(all.data[5], first.output[0]);
  const ids: string[] = all.data.map((i: Json) => i.id);
  assertEquals(new Set(ids).size, ids.length);
  assert(ids.every((i) => i.length > 4));
  assertEquals([all.first_id, all.last_id], [ids[0], ids[5]]);
  // Newest first by default; pages follow `after`.
  const newest = await list("?limit=4");
  assertEquals(newest.data.map((i: Json) => i.id), ids.slice(2).reverse());
  assertEquals([newest.has_more, newest.last_id], [true, ids[2]]);
  const rest = await list(`?limit=4&after=${newest.last_id}`);
  assertEquals(rest.data.map((i: Json) => i.id), [ids[1], ids[0]]);
  assertEquals(rest.has_more, false);
  const page = await list(`?order=asc&limit=2&after=${ids[1]}`);
  assertEquals(page.data.map((i: Json) => i.id), ids.slice(2, 4));
  assertEquals(page.has_more, true);
  // A plain string input is one user message.
  const plain: Json = await (await get(app, `/v1/responses/${first.id}/input_items`)).json();
  assertEquals(plain.data.length, 1);
  assertEquals(plain.data[0].role, "user");
  assertEquals(plain.data[0].content, [{ type: "input_text", text: "hello there" }]);
});

Deno.test("responses: input_items: unknown id 404; bad limit, order, after 400", async () => {
  const { app } = setup();
  const missing = await get(app, `/v1/responses/resp_${"0".repeat(32)}/input_items`);
  assertEquals(missing.status, 404);
  const { error }: Json = await missing.json();
  assertEquals([error.code, error.param], ["response_not_found", "response_id"]);
  const { id }: Json = await (await post(app, "/v1/responses", {
    model: "fake/chat",
    input: "hi",
    max_output_tokens: 1,
  })).json();
  for (
    const [query, param] of [
      ["limit=0", "limit"],
      ["limit=101", "limit"],
      ["limit=abc", "limit"],
      ["limit=", "limit"],
      ["order=up", "order"],
      ["after=msg_nope", "after"],
    ]
  ) {
    const res = await get(app, `/v1/responses/${id}/input_items?${query}`);
    assertEquals(res.status, 400, query);
    assertEquals((await res.json()).error.param, param, query);
  }
  const unstored: Json = await (await post(app, "/v1/responses", {
    model: "fake/chat",
    input: "hi",
    store: false,
    max_output_tokens: 1,
  })).json();
  assertEquals((await get(app, `/v1/responses/${unstored.id}/input_items`)).status, 404);
});

Deno.test("responses: input_items of a response stored without its input: empty", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const { app } = setup({}, { responsesDir: dir });
    const { id }: Json = await (await post(app, "/v1/responses", {
      model: "fake/chat",
      input: "hi",
      max_output_tokens: 1,
    })).json();
    // A file written before the input was kept.
    const path = `${dir}/${id}.json`;
    const { input: _, ...old } = JSON.parse(await Deno.readTextFile(path));
    await Deno.writeTextFile(path, JSON.stringify(old));
    const res = await get(app, `/v1/responses/${id}/input_items`);
    assertEquals(await res.json(), {
      object: "list",
      data: [],
      first_id: null,
      last_id: null,
      has_more: false,
    });
    assertEquals((await get(app, `/v1/responses/${id}`)).status, 200);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

// Captures the core logger's lines (the store logs through it) and keeps them off stderr.
async function withLogLines(fn: (lines: string[]) => Promise<void>): Promise<void> {
  const lines: string[] = [];
  setupLogger({ level: "warn", stderr: false, sink: (line) => lines.push(line) });
  try {
    await fn(lines);
  } finally {
    setupLogger("info");
  }
}

// Reads a Responses stream to its end: the events' data.
async function events(res: Response): Promise<Json[]> {
  const text = await res.text();
  return text.split("\n").filter((l) => l.startsWith("data: ")).map((l) => JSON.parse(l.slice(6)));
}

Deno.test("responses: an entry over the store's byte cap is answered, not stored, and the header says why", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await withLogLines(async (lines) => {
      const { app } = setup({}, { responsesDir: dir });
      // 1.5 MiB in `user`, stored verbatim before: over the 1 MiB default.
      const body = {
        model: "fake/chat",
        input: "hi",
        max_output_tokens: 1,
        user: "u".repeat(3 << 19),
      };
      const res = await post(app, "/v1/responses", body);
      assertEquals(res.status, 200);
      assertMatch(
        res.headers.get(STORE_WARNING_HEADER)!,
        /^not stored: \d+ bytes of JSON, over the limit of 1048576$/,
      );
      const response: Json = await res.json();
      assertEquals([response.status, response.store], ["incomplete", false]);
      assertEquals((await get(app, `/v1/responses/${response.id}`)).status, 404);
      assertEquals([...Deno.readDirSync(dir)].length, 0);
      assertMatch(lines.join("\n"), /WARN .*response not stored: too large/);
      // The same in a stream: its last event says `store: false`.
      const stream = await post(app, "/v1/responses", { ...body, stream: true });
      const last = (await events(stream)).at(-1);
      assertEquals([last.type, last.response.store], ["response.incomplete", false]);
      assertEquals((await get(app, `/v1/responses/${last.response.id}`)).status, 404);
      // A small one is stored and says so.
      const small = await post(app, "/v1/responses", { ...body, user: "u" });
      assertEquals(small.headers.get(STORE_WARNING_HEADER), null);
      const { id, store }: Json = await small.json();
      assertEquals(store, true);
      assertEquals((await get(app, `/v1/responses/${id}`)).status, 200);
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("responses: a corrupt stored file is a 404 (and a 400 as previous_response_id), logged", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await withLogLines(async (lines) => {
      const { app } = setup({}, { responsesDir: dir });
      const { id }: Json = await (await post(app, "/v1/responses", {
        model: "fake/chat",
        input: "hi",
        max_output_tokens: 1,
      })).json();
      await Deno.writeTextFile(`${dir}/${id}.json`, "{not json");
      const res = await get(app, `/v1/responses/${id}`);
      assertEquals(res.status, 404);
      assertEquals((await res.json()).error.code, "response_not_found");
      assertEquals((await get(app, `/v1/responses/${id}/input_items`)).status, 404);
      const next = await post(app, "/v1/responses", {
        model: "fake/chat",
        input: "again",
        previous_response_id: id,
      });
      assertEquals(next.status, 400);
      assertEquals((await next.json()).error.param, "previous_response_id");
      assertMatch(lines.join("\n"), new RegExp(`WARN .*corrupt stored response.*${id}\\.json`));
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("responses: an unwritable store still answers (200, header, store: false) and logs the error", async () => {
  const parent = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${parent}/file`, "");
    await withLogLines(async (lines) => {
      // A file where the folder should be: no write can succeed.
      const { app } = setup({}, { responsesDir: `${parent}/file/responses` });
      const body = { model: "fake/chat", input: "hello there", max_output_tokens: 3 };
      const res = await post(app, "/v1/responses", body);
      assertEquals(res.status, 200);
      assertEquals(
        res.headers.get(STORE_WARNING_HEADER),
        "not stored: the response store could not be written",
      );
      const response: Json = await res.json();
      assert(response.output[0].content[0].text.length > 0);
      assertEquals(response.store, false);
      assertEquals((await get(app, `/v1/responses/${response.id}`)).status, 404);
      const stream = await post(app, "/v1/responses", { ...body, stream: true });
      assertEquals(stream.status, 200);
      const all = await events(stream);
      const last = all.at(-1);
      assertEquals([last.type, last.response.store], ["response.incomplete", false]);
      assert(all.some((e) => e.type === "response.output_text.delta"));
      assertMatch(lines.join("\n"), /ERROR .*response not stored: the store could not be written/);
    });
  } finally {
    await Deno.remove(parent, { recursive: true });
  }
});

Deno.test("responses: a function_call_output must answer a call of this input or of the chain", async () => {
  const { app } = setup();
  const stray = await post(app, "/v1/responses", {
    model: "fake/chat",
    input: [
      { role: "user", content: "hi" },
      { type: "function_call_output", call_id: "c404", output: "42" },
    ],
  });
  assertEquals(stray.status, 400);
  const { error } = await stray.json();
  assertEquals([error.param, error.code], ["input.1.call_id", "tool_call_not_found"]);
  // A call made in an earlier turn of the chain may be answered now.
  const first: Json = await (await post(app, "/v1/responses", {
    model: "fake/chat",
    max_output_tokens: 2,
    input: [
      { role: "user", content: "hi" },
      { type: "function_call", call_id: "c9", name: "f", arguments: "{}" },
    ],
  })).json();
  const answered = await post(app, "/v1/responses", {
    model: "fake/chat",
    max_output_tokens: 2,
    previous_response_id: first.id,
    input: [{ type: "function_call_output", call_id: "c9", output: "42" }],
  });
  assertEquals(answered.status, 200);
  await answered.body?.cancel();
});
