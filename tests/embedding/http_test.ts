import { CancelledError, ServiceError } from "../../src/core/errors.ts";
import { postJson } from "../../src/embedding/_http.ts";
import { assertRejects } from "../_assert.ts";
import { startStandIn } from "./_stand_in.ts";

Deno.test("postJson() reports a body that is not JSON as ServiceError", async () => {
  const server = startStandIn(() => new Response("plain text", { status: 200 }));
  try {
    await assertRejects(
      () => postJson(server.url, {}, { provider: "Test" }),
      ServiceError,
      "not JSON: plain text",
    );
  } finally {
    await server.close();
  }
});

Deno.test("postJson() turns the caller's abort into CancelledError", async () => {
  let release!: () => void;
  const hold = new Promise<void>((resolve) => release = resolve);
  const server = startStandIn(async () => {
    await hold;
    return new Response("{}");
  });
  try {
    const controller = new AbortController();
    const call = postJson(server.url, {}, { provider: "Test", signal: controller.signal });
    setTimeout(() => controller.abort(), 20);
    await assertRejects(() => call, CancelledError);
  } finally {
    release();
    await server.close();
  }
});
