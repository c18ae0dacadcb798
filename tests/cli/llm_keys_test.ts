// `svc llm keys create | list | revoke` as real subprocesses against a gateway on a real socket.
import { assert, assertEquals, assertMatch } from "../_assert.ts";
import { setupLogger } from "../../src/core/logging.ts";
import { startGateway } from "../../src/gateway/gateway_server.ts";
import { openStateStore } from "../../src/state/open_state_store.ts";
import { runCli } from "./_run_cli.ts";

setupLogger("error");
const ADMIN = "admin-secret-for-cli-tests";

Deno.test("svc llm keys create/list/revoke manage the gateway's keys", async () => {
  const home = await Deno.makeTempDir();
  const state = await openStateStore("sqlite::memory:");
  const gw = await startGateway({
    logger: { error: () => {}, warn: () => {} },
    adminApiKey: ADMIN,
    inferenceNeedsKey: true,
    state,
  });
  const opts = {
    perms: ["--allow-env", "--allow-read", "--allow-net=127.0.0.1"],
    home,
    env: { SVC_ADMIN_API_KEY: ADMIN },
  };
  const url = ["--url", gw.baseUrl];
  try {
    const made = await runCli(
      ["llm", "keys", "create", "--name", "ci", "--models", "m1,m2", ...url],
      opts,
    );
    assertEquals(made.code, 0, made.stderr);
    assertEquals(made.stderr, "");
    const secret = /key (sk-svc-\S+)/.exec(made.stdout)?.[1];
    assert(secret, made.stdout);
    const id = /created (key_[0-9a-f]+)/.exec(made.stdout)![1];

    const listed = await runCli(["llm", "keys", "list", ...url], opts);
    assertEquals(listed.code, 0, listed.stderr);
    assertMatch(listed.stdout, new RegExp(`${id}\\s+ci\\s+inference`));
    assert(!listed.stdout.includes(secret!), "list shows no secret");

    const revoked = await runCli(["llm", "keys", "revoke", id, ...url], opts);
    assertEquals(revoked.code, 0, revoked.stderr);
    assertMatch(revoked.stdout, /revoked key_/);

    // Failures say what to do.
    const again = await runCli(["llm", "keys", "revoke", id, ...url], opts);
    assert(again.code !== 0);
    assertMatch(again.stderr, /already revoked/);
    for (const models of ["", " , "]) {
      const noModels = await runCli(
        ["llm", "keys", "create", "--name", "x", "--models", models, ...url],
        opts,
      );
      assertEquals(noModels.code, 65, noModels.stderr);
      assertMatch(noModels.stderr, /--models .* names no model/);
    }
    assertEquals(
      (await runCli(["llm", "keys", "list", "--json", ...url], opts)).stdout.match(/"id"/g)
        ?.length,
      1,
      "no key was created",
    );
    // --url reads as the client library reads a base URL: a bare origin is its /v1.
    const origin = gw.baseUrl.replace(/\/v1$/, "");
    const byOrigin = await runCli(["llm", "keys", "list", "--url", `${origin}/`], opts);
    assertEquals(byOrigin.code, 0, byOrigin.stderr);
    assertMatch(byOrigin.stdout, new RegExp(`${id}\\s+ci`));
    const notUrl = await runCli(["llm", "keys", "list", "--url", "localhost:8000"], opts);
    assertEquals(notUrl.code, 65, notUrl.stderr);
    assertMatch(notUrl.stderr, /--url is 'localhost:8000': expected the gateway's http\(s\)/);
    const noName = await runCli(["llm", "keys", "create", ...url], opts);
    assert(noName.code !== 0);
    assertMatch(noName.stderr, /--name <label>/);
    const wrongKey = await runCli(["llm", "keys", "list", ...url], {
      ...opts,
      env: { SVC_ADMIN_API_KEY: "wrong" },
    });
    assert(wrongKey.code !== 0);
    assertMatch(wrongKey.stderr, /SVC_ADMIN_API_KEY/);
  } finally {
    await gw.stop();
    await state.close();
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("svc llm keys create warns that a gateway serving without keys is not limited by one", async () => {
  const home = await Deno.makeTempDir();
  const state = await openStateStore("sqlite::memory:");
  const gw = await startGateway({ logger: { error: () => {}, warn: () => {} }, state });
  try {
    const made = await runCli(["llm", "keys", "create", "--name", "ci", "--url", gw.baseUrl], {
      perms: ["--allow-env", "--allow-read", "--allow-net=127.0.0.1"],
      home,
    });
    assertEquals(made.code, 0, made.stderr);
    assertMatch(made.stdout, /key sk-svc-/);
    assertMatch(made.stderr, /warning: .* carry no key, so this key limits nothing yet/);
  } finally {
    await gw.stop();
    await state.close();
    await Deno.remove(home, { recursive: true });
  }
});
