// With HTTP_PROXY set, the gateway's transport leaves http:// backends to fetch, which honours the
// proxy; our HTTP/1.1 client would go straight to the backend. Checked in a child process, as the
// environment variable is the whole process's.
import { assertEquals } from "../_assert.ts";

const CHILD = `
import { RemoteTransport } from ${
  JSON.stringify(new URL("../../src/gateway/transport.ts", import.meta.url).href)
};
import { Http1Client } from ${
  JSON.stringify(new URL("../../src/http/http1/client.ts", import.meta.url).href)
};
const client = new Http1Client();
const res = await new RemoteTransport({ client }).sendInit(Deno.args[0], {
  method: "GET",
  headers: {},
  signal: AbortSignal.timeout(10_000),
});
console.log(await res.text());
client.close();
`;

Deno.test("RemoteTransport sends through fetch (and its proxy) when HTTP_PROXY is set, else through our client", async () => {
  const proxy = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    () => new Response("proxy"),
  );
  const backend = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    // fetch names itself (user-agent Deno/…); our client sends no user-agent.
    (req) => new Response(`backend ua=${req.headers.get("user-agent") ?? "none"}`),
  );
  const dir = await Deno.makeTempDir();
  const script = `${dir}/child.ts`;
  await Deno.writeTextFile(script, CHILD);
  // This process's environment without any proxy variable, plus `env`.
  const base = Object.fromEntries(
    Object.entries(Deno.env.toObject()).filter(([k]) => !/_proxy$/i.test(k)),
  );
  const run = async (env: Record<string, string>) => {
    const out = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--no-check",
        "--allow-net=127.0.0.1",
        "--allow-env",
        "--allow-read",
        script,
        `http://127.0.0.1:${backend.addr.port}/v1/models`,
      ],
      env: { ...base, ...env },
      clearEnv: true,
      stderr: "inherit",
    }).output();
    return new TextDecoder().decode(out.stdout).trim();
  };
  try {
    assertEquals(await run({ HTTP_PROXY: `http://127.0.0.1:${proxy.addr.port}` }), "proxy");
    assertEquals(await run({}), "backend ua=none");
  } finally {
    await proxy.shutdown();
    await backend.shutdown();
    await Deno.remove(dir, { recursive: true });
  }
});
