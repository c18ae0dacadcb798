import { assert, assertEquals, assertRejects } from "../../_assert.ts";
import { startHubStandIn } from "../../_helpers/hub_stand_in.ts";
import { join } from "node:path";
import { writeFakeModel } from "./_fake_model.ts";

async function withModel(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await writeFakeModel();
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("startHubStandIn() lists a repo with sizes, LFS sha256 and a commit sha", async () => {
  await withModel(async (dir) => {
    await using hub = startHubStandIn({ repos: { "demo/tiny": dir } });
    const res = await fetch(`${hub.endpoint}/api/models/demo/tiny/revision/main?blobs=true`);
    const body = await res.json();
    assertEquals(res.status, 200);
    assert(/^[0-9a-f]{40}$/.test(body.sha));
    assertEquals(body.sha, await hub.commitOf("demo/tiny"));
    const onnx = body.siblings.find((s: { rfilename: string }) =>
      s.rfilename === "onnx/model.onnx"
    );
    assertEquals(onnx.size, 300_000);
    assert(/^[0-9a-f]{64}$/.test(onnx.lfs.sha256));
    const config = body.siblings.find((s: { rfilename: string }) => s.rfilename === "config.json");
    assertEquals(config.lfs, undefined);
  });
});

Deno.test("startHubStandIn() answers Range requests with 206 and past the end with 416", async () => {
  await withModel(async (dir) => {
    await using hub = startHubStandIn({ repos: { "demo/tiny": dir } });
    const whole = await Deno.readFile(join(dir, "onnx/model.onnx"));
    const url = `${hub.endpoint}/demo/tiny/resolve/main/onnx/model.onnx`;
    const part = await fetch(url, { headers: { range: "bytes=1000-" } });
    assertEquals(part.status, 206);
    assertEquals(part.headers.get("content-range"), `bytes 1000-299999/300000`);
    assertEquals(new Uint8Array(await part.arrayBuffer()), whole.subarray(1000));
    const past = await fetch(url, { headers: { range: "bytes=300000-" } });
    assertEquals(past.status, 416);
    await past.body?.cancel();
    assertEquals(hub.requests.map((r) => r.range), ["bytes=1000-", "bytes=300000-"]);
  });
});

Deno.test("startHubStandIn() needs the token when one is set", async () => {
  await withModel(async (dir) => {
    await using hub = startHubStandIn({ repos: { "demo/tiny": dir }, token: "t0k" });
    const url = `${hub.endpoint}/demo/tiny/resolve/main/config.json`;
    const denied = await fetch(url);
    await denied.body?.cancel();
    assertEquals(denied.status, 401);
    const ok = await fetch(url, { headers: { authorization: "Bearer t0k" } });
    assertEquals(ok.status, 200);
    assertEquals((await ok.json()).file, "config.json");
  });
});

Deno.test("startHubStandIn() answers 404 with the hub's error codes", async () => {
  await withModel(async (dir) => {
    await using hub = startHubStandIn({ repos: { "demo/tiny": dir } });
    const cases: [string, string][] = [
      ["/nope/repo/resolve/main/config.json", "RepoNotFound"],
      ["/demo/tiny/resolve/v9/config.json", "RevisionNotFound"],
      ["/demo/tiny/resolve/main/missing.json", "EntryNotFound"],
      ["/demo/tiny/resolve/main/..%2F..%2Fetc%2Fpasswd", "EntryNotFound"],
    ];
    for (const [path, code] of cases) {
      const res = await fetch(`${hub.endpoint}${path}`);
      await res.body?.cancel();
      assertEquals([res.status, res.headers.get("x-error-code")], [404, code], path);
    }
  });
});

Deno.test("startHubStandIn() cuts the connection after cutAfterBytes for cutRequests answers", async () => {
  await withModel(async (dir) => {
    await using hub = startHubStandIn({
      repos: { "demo/tiny": dir },
      cutAfterBytes: 70_000,
      cutRequests: 1,
    });
    const url = `${hub.endpoint}/demo/tiny/resolve/main/onnx/model.onnx`;
    const cut = await fetch(url);
    assertEquals(cut.headers.get("content-length"), "300000");
    let got = 0;
    await assertRejects(async () => {
      for await (const chunk of cut.body!) got += chunk.length;
    }, Error);
    assertEquals(got, 70_000);
    const next = await fetch(url);
    assertEquals((await next.arrayBuffer()).byteLength, 300_000);
  });
});

Deno.test("startHubStandIn() redirects LFS files to a CDN path that needs no token", async () => {
  await withModel(async (dir) => {
    await using hub = startHubStandIn({
      repos: { "demo/tiny": dir },
      token: "t",
      redirectLfs: true,
    });
    const res = await fetch(`${hub.endpoint}/demo/tiny/resolve/main/onnx/model.onnx`, {
      headers: { authorization: "Bearer t" },
      redirect: "manual",
    });
    await res.body?.cancel();
    assertEquals(res.status, 302);
    assert(/^[0-9a-f]{64}$/.test(res.headers.get("x-linked-etag")!.replaceAll('"', "")));
    const cdn = await fetch(new URL(res.headers.get("location")!, hub.endpoint));
    assertEquals((await cdn.arrayBuffer()).byteLength, 300_000);
  });
});

Deno.test("startHubStandIn() fails the first failRequests requests with failStatus", async () => {
  await withModel(async (dir) => {
    await using hub = startHubStandIn({ repos: { "demo/tiny": dir } });
    hub.setFaults({ failRequests: 1, failStatus: 502 });
    const url = `${hub.endpoint}/demo/tiny/resolve/main/config.json`;
    const first = await fetch(url);
    await first.body?.cancel();
    const second = await fetch(url);
    await second.body?.cancel();
    assertEquals([first.status, second.status], [502, 200]);
  });
});
