import { join } from "node:path";
import {
  AuthenticationError,
  ConfigurationError,
  NotFoundError,
  ServiceError,
} from "../../../src/core/errors.ts";
import { HUB_UNAVAILABLE, HubClient } from "../../../src/engine/hub/hub_client.ts";
import { assert, assertEquals, assertMatch, assertRejects, assertThrows } from "../../_assert.ts";
import { startHubStandIn } from "../../_helpers/hub_stand_in.ts";
import { writeFakeModel } from "./_fake_model.ts";

const REPO = "demo-org/fake-model";

async function withHub(
  fn: (hub: ReturnType<typeof startHubStandIn>, model: string) => Promise<void>,
  token?: string,
): Promise<void> {
  const model = await writeFakeModel();
  const hub = startHubStandIn({ repos: { [REPO]: model }, token });
  try {
    await fn(hub, model);
  } finally {
    await hub.close();
    await Deno.remove(model, { recursive: true });
  }
}

Deno.test("HubClient builds the hub's URL layout and encodes revisions", () => {
  const hub = new HubClient({ endpoint: "https://hub.example/" });
  assertEquals(
    hub.fileUrl("org/name", "refs/pr/1", "onnx/model.onnx"),
    "https://hub.example/org/name/resolve/refs%2Fpr%2F1/onnx/model.onnx",
  );
  assertEquals(
    hub.listingUrl("org/name", "main"),
    "https://hub.example/api/models/org/name/revision/main",
  );
});

Deno.test("HubClient refuses an endpoint that is not an http(s) URL", () => {
  const err = assertThrows(() => new HubClient({ endpoint: "ftp://x" }), ConfigurationError);
  assertEquals(err.param, "HUB_ENDPOINT");
});

Deno.test("HubClient.listFiles() reads sizes and LFS sha256 from the listing", async () => {
  await withHub(async (hub) => {
    const listing = await new HubClient({ endpoint: hub.endpoint }).listFiles(REPO, "main");
    assertEquals(listing.sha, await hub.commitOf(REPO));
    const onnx = listing.siblings.find((s) => s.rfilename === "onnx/model.onnx")!;
    assertEquals(onnx.size, 300_000);
    assertMatch(onnx.lfs!.sha256, /^[0-9a-f]{64}$/);
    assertEquals(hub.requests[0].path, `/api/models/${REPO}/revision/main`);
  });
});

Deno.test("HubClient.openFile() of a missing file is a NotFoundError naming file and revision", async () => {
  await withHub(async (hub) => {
    const client = new HubClient({ endpoint: hub.endpoint });
    const err = await assertRejects(
      () => client.openFile(REPO, "main", "onnx/model_nope.onnx"),
      NotFoundError,
      `file "onnx/model_nope.onnx" was not found in model "${REPO}" at revision "main"`,
    );
    assertMatch(err.message, new RegExp(hub.endpoint));
  });
});

Deno.test("HubClient.openFile() gives the sha256 and total size of a ranged LFS answer", async () => {
  await withHub(async (hub, model) => {
    const client = new HubClient({ endpoint: hub.endpoint });
    const res = await client.openFile(REPO, "main", "onnx/model.onnx", { start: 299_000 });
    const body = new Uint8Array(await new Response(res.body).arrayBuffer());
    assertEquals([res.status, res.start, res.totalSize, body.length], [
      206,
      299_000,
      300_000,
      1000,
    ]);
    const listing = await client.listFiles(REPO, "main");
    assertEquals(
      res.sha256,
      listing.siblings.find((s) => s.rfilename === "onnx/model.onnx")!.lfs!.sha256,
    );
    const whole = await Deno.readFile(join(model, "onnx/model.onnx"));
    assertEquals(body, whole.subarray(299_000));
    const past = await client.openFile(REPO, "main", "onnx/model.onnx", { start: 300_000 });
    assertEquals([past.status, past.body], [416, null]);
  });
});

Deno.test("HubClient sends the token to the hub but not to another origin it redirects to", async () => {
  await withHub(async (hub) => {
    const redirector = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
      const path = new URL(req.url).pathname.replace(
        /^\/demo-org\/fake-model\/resolve\/main\//,
        "",
      );
      return new Response(null, {
        status: 302,
        headers: {
          location: `${hub.endpoint}/_cdn/${encodeURIComponent(REPO)}/${path}`,
          "x-linked-etag": `"${"a".repeat(64)}"`,
        },
      });
    });
    try {
      const client = new HubClient({
        endpoint: `http://127.0.0.1:${redirector.addr.port}`,
        token: "tk",
      });
      const res = await client.openFile(REPO, "main", "config.json");
      assertEquals((await new Response(res.body).json()).file, "config.json");
      assertEquals(res.sha256, "a".repeat(64)); // taken from the redirect, as the hub sends it
      assertEquals(hub.requests.map((r) => r.authorization), [null]);
    } finally {
      await redirector.shutdown();
    }
  });
});

Deno.test("HubClient maps 401 to an AuthenticationError that names HUB_TOKEN", async () => {
  await withHub(async (hub) => {
    const err = await assertRejects(
      () => new HubClient({ endpoint: hub.endpoint }).listFiles(REPO, "main"),
      AuthenticationError,
      "Set HUB_TOKEN",
    );
    assertEquals(err.status, 401);
    assert(!err.message.includes("refused)"));
  }, "secret");
});

Deno.test("HubClient.withRetry() retries transient errors with back-off, then gives up", async () => {
  const client = new HubClient({ retries: 2, retryDelayMs: 1 });
  let calls = 0;
  const value = await client.withRetry(undefined, () => {
    calls++;
    if (calls < 3) throw new ServiceError("flaky", { code: HUB_UNAVAILABLE });
    return Promise.resolve("ok");
  });
  assertEquals([value, calls], ["ok", 3]);
  calls = 0;
  await assertRejects(
    () =>
      client.withRetry(undefined, () => {
        calls++;
        throw new ServiceError("down", { code: HUB_UNAVAILABLE });
      }),
    ServiceError,
    "down",
  );
  assertEquals(calls, 3);
  calls = 0;
  await assertRejects(
    () =>
      client.withRetry(undefined, () => {
        calls++;
        throw new NotFoundError("gone");
      }),
    NotFoundError,
  );
  assertEquals(calls, 1);
});

Deno.test("HubClient names the endpoint when nothing listens there", async () => {
  const probe = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    () => new Response(),
  );
  const endpoint = `http://127.0.0.1:${probe.addr.port}`;
  await probe.shutdown();
  const err = await assertRejects(
    () => new HubClient({ endpoint, retries: 1, retryDelayMs: 1 }).listFiles(REPO, "main"),
    ServiceError,
    `could not reach the model hub at ${endpoint}`,
  );
  assertEquals(err.code, HUB_UNAVAILABLE);
  assertMatch(err.message, /HUB_ENDPOINT/);
});

Deno.test("HubClient gives up on a hub that does not answer within timeoutMs", async () => {
  const { promise: released, resolve: release } = Promise.withResolvers<void>();
  const silent = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async () => {
    await released;
    return new Response("late");
  });
  try {
    const endpoint = `http://127.0.0.1:${silent.addr.port}`;
    const err = await assertRejects(
      () => new HubClient({ endpoint, timeoutMs: 50, retries: 0 }).listFiles(REPO, "main"),
      ServiceError,
      `the model hub at ${endpoint} did not answer within 50 ms`,
    );
    assertEquals(err.code, HUB_UNAVAILABLE);
  } finally {
    release();
    await silent.shutdown();
  }
});
