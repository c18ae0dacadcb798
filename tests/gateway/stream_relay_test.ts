import { type RelayOutcome, relayStream } from "../../src/gateway/_stream_relay.ts";
import { assertEquals } from "../_assert.ts";

const encoder = new TextEncoder();

Deno.test("relayStream(): a client that leaves mid-stream is a cancellation, not a backend failure", async () => {
  // Aborting the upstream fetch errors its body, as fetch does; a read was waiting on it.
  let breakUpstream!: (reason: unknown) => void;
  const upstream = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(encoder.encode('data: {"n": 1}\n\n'));
      breakUpstream = (reason) => controller.error(reason);
    },
  });
  const upstreamReader = upstream.getReader();
  const first = (await upstreamReader.read()).value!;
  // A fetch body's cancel settles later than the read it breaks.
  const reader = {
    read: () => upstreamReader.read(),
    cancel: async (reason?: unknown) => {
      await new Promise((resolve) => setTimeout(resolve, 20));
      await upstreamReader.cancel(reason);
    },
  } as unknown as ReadableStreamDefaultReader<Uint8Array>;
  const outcomes: RelayOutcome[] = [];
  const body = relayStream({
    reader,
    first,
    idleTimeoutMs: 60_000,
    backendId: "b",
    abortUpstream: (reason) => breakUpstream(reason),
    abortedBy: () => undefined,
    onEnd: (outcome) => {
      console.log("END", outcome, new Error().stack);
      outcomes.push(outcome);
    },
  });
  const client = body.getReader();
  await client.read();
  const waiting = client.read(); // the relay now waits on the backend
  await client.cancel(new DOMException("the client stalled", "AbortError"));
  await waiting;
  assertEquals(outcomes, ["cancelled"]);
});
