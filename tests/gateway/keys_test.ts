// Managed API keys over real sockets: created once by the admin, an inference key refused on the
// management API (403), a key's model list enforced (404 model_not_found, as OpenAI answers), its
// usage recorded from each answer and listed by GET /v1/management/usage.
import OpenAI from "openai";
import { assert, assertEquals } from "../_assert.ts";
import { setupLogger } from "../../src/core/logging.ts";
import { startGateway } from "../../src/gateway/gateway_server.ts";
import type { HttpLogger } from "../../src/http/logger.ts";
import { openStateStore } from "../../src/state/open_state_store.ts";
import { ApiKeys } from "../../src/gateway/api_keys.ts";
import { FakeEngine } from "./_fake_backend.ts";

setupLogger("error");
const QUIET: HttpLogger = { error: () => {}, warn: () => {} };
const ADMIN = "admin-secret-for-tests";

Deno.test("gateway keys: scopes, model lists and usage are enforced and recorded", async () => {
  const engine = new FakeEngine("e1");
  const state = await openStateStore("sqlite::memory:");
  const gw = await startGateway({
    logger: QUIET,
    adminApiKey: ADMIN,
    inferenceNeedsKey: true,
    state,
    backends: [{ id: "e1", baseUrl: engine.serve(), kind: "llm", models: ["m1", "m2"] }],
  });
  const call = async (key: string, method: string, path: string, body?: unknown) => {
    const res = await fetch(`${gw.baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: await res.json() };
  };
  try {
    const made = await call(ADMIN, "POST", "/management/keys", {
      name: "team-a",
      scope: "inference",
      models: ["m1"],
      rpm: 60,
    });
    assertEquals(made.status, 201);
    const secret = made.body.key as string;
    assert(secret.startsWith("sk-svc-"));
    // Listed without the secret (only its hash is stored).
    const listed = await call(ADMIN, "GET", "/management/keys");
    assertEquals(listed.body.data.length, 1);
    assertEquals(listed.body.data[0].key, undefined);
    assertEquals(listed.body.data[0].rpm, 60);
    assert(!JSON.stringify(listed.body).includes(secret));

    // Inference key: 403 on management routes, 401 without any key.
    const denied = await call(secret, "GET", "/management/keys");
    assertEquals(denied.status, 403);
    assertEquals(denied.body.error.code, "admin_key_required");
    assertEquals((await call("nope", "GET", "/models")).status, 401);
    assertEquals(
      await fetch(`${gw.baseUrl}/models`).then(async (r) => (await r.body?.cancel(), r.status)),
      401,
    );
    // Bad input is a 400 with an OpenAI error body.
    const bad = await call(ADMIN, "POST", "/management/keys", { name: "x", scope: "root" });
    assertEquals(bad.status, 400);
    assertEquals(bad.body.error.param, "scope");

    // Models: only its own are listed and served; another is 404 model_not_found.
    const client = new OpenAI({ baseURL: gw.baseUrl, apiKey: secret, maxRetries: 0 });
    assertEquals((await client.models.list()).data.map((m) => m.id), ["m1"]);
    await client.chat.completions.create({
      model: "m1",
      messages: [{ role: "user", content: "hi" }],
    });
    const other = await call(secret, "POST", "/chat/completions", {
      model: "m2",
      messages: [{ role: "user", content: "hi" }],
    });
    assertEquals(other.status, 404);
    assertEquals(other.body.error.code, "model_not_found");
    // A stream counts its usage chunk's tokens even when the client did not ask for one (leaving
    // usage out must not escape a tpm): the gateway asks, and the client does not see it.
    const stream = await client.chat.completions.create({
      model: "m1",
      messages: [{ role: "user", content: "hi" }],
      stream: true,
    });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    assertEquals(chunks.length, 3);
    assert(chunks.every((c) => !("usage" in c) && c.choices.length === 1), JSON.stringify(chunks));
    assertEquals(engine.seen.at(-1)!.body.stream_options, { include_usage: true });
    // Asked for by the client, the usage chunk passes as it is.
    const asked = await client.chat.completions.create({
      model: "m1",
      messages: [{ role: "user", content: "hi" }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const last = [];
    for await (const chunk of asked) last.push(chunk);
    assertEquals(last.at(-1)!.usage?.prompt_tokens, 5);

    // Usage: three requests; the JSON answer's 1 + 1 tokens and each stream's 5 + 3.
    const usage = await call(ADMIN, "GET", `/management/usage?key_id=${made.body.id}`);
    assertEquals(usage.status, 200);
    assertEquals(usage.body.data.length, 1);
    const row = usage.body.data[0];
    assertEquals([row.model, row.requests, row.prompt_tokens, row.completion_tokens], [
      "m1",
      3,
      11,
      7,
    ]);
    assertEquals(row.day, new Date().toISOString().slice(0, 10));

    // Revoked: refused at once on this replica; a second revoke is a 404.
    assertEquals((await call(ADMIN, "DELETE", `/management/keys/${made.body.id}`)).status, 200);
    await new Promise((r) => setTimeout(r, 1100)); // the lookup cache
    assertEquals((await call(secret, "GET", "/models")).status, 401);
    assertEquals((await call(ADMIN, "DELETE", `/management/keys/${made.body.id}`)).status, 404);
  } finally {
    await gw.stop();
    await state.close();
    await engine.close();
  }
});

Deno.test("gateway keys: static keys that start with sk-svc- are the operator's, not looked up", async () => {
  const state = await openStateStore("sqlite::memory:");
  const engine = new FakeEngine("e1");
  const admin = "sk-svc-operator-admin";
  const chat = "sk-svc-operator-chat";
  const gw = await startGateway({
    logger: QUIET,
    adminApiKey: admin,
    apiKey: chat,
    state,
    backends: [{ id: "e1", baseUrl: engine.serve(), kind: "llm", models: ["m1"] }],
  });
  const status = async (key: string, method: string, path: string, body?: unknown) => {
    const res = await fetch(`${gw.baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    await res.body?.cancel();
    return res.status;
  };
  const hi = { model: "m1", messages: [{ role: "user", content: "hi" }] };
  try {
    assertEquals(await status(admin, "GET", "/management/keys"), 200);
    assertEquals(await status(admin, "POST", "/chat/completions", hi), 200);
    assertEquals(await status(chat, "POST", "/chat/completions", hi), 200);
    assertEquals(await status(chat, "GET", "/management/keys"), 403);
    assertEquals(await status("sk-svc-operator-other", "POST", "/chat/completions", hi), 401);
  } finally {
    await gw.stop();
    await state.close();
    await engine.close();
  }
});

Deno.test("gateway keys: admin keys take no restrictions, a restricted one mints none; since is a real day", async () => {
  const state = await openStateStore("sqlite::memory:");
  const gw = await startGateway({ logger: QUIET, adminApiKey: ADMIN, state });
  const call = async (key: string, method: string, path: string, body?: unknown) => {
    const res = await fetch(`${gw.baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: await res.json() };
  };
  try {
    for (const [field, value] of [["models", ["m1"]], ["rpm", 2], ["tpm", 100]] as const) {
      const refused = await call(ADMIN, "POST", "/management/keys", {
        name: "a",
        scope: "admin",
        [field]: value,
      });
      assertEquals(refused.status, 400, JSON.stringify(refused.body));
      assertEquals(refused.body.error.param, field);
    }
    // One stored before admin keys refused restrictions may not create keys at all.
    const { secret } = await new ApiKeys(state).create({
      name: "old",
      scope: "admin",
      models: ["x"],
      rpm: 2,
    });
    const minted = await call(secret, "POST", "/management/keys", { name: "b", scope: "admin" });
    assertEquals(minted.status, 403, JSON.stringify(minted.body));
    assertEquals(minted.body.error.code, "restricted_key");
    const plain = await call(ADMIN, "POST", "/management/keys", { name: "c", scope: "admin" });
    assertEquals(plain.status, 201);
    assertEquals(
      (await call(plain.body.key, "POST", "/management/keys", { name: "d", scope: "admin" }))
        .status,
      201,
    );

    for (const since of ["2026-13-45", "2026-02-30", "2026-1-05"]) {
      const bad = await call(ADMIN, "GET", `/management/usage?since=${since}`);
      assertEquals(bad.status, 400, since);
      assertEquals(bad.body.error.param, "since");
    }
    assertEquals((await call(ADMIN, "GET", "/management/usage?since=2028-02-29")).status, 200);
  } finally {
    await gw.stop();
    await state.close();
  }
});
