import { encodeSseData, readSseData, SSE_DONE } from "../../src/protocol/sse.ts";
import { assertEquals } from "../_assert.ts";

function streamOf(parts: string[]): ReadableStream<Uint8Array> {
  const enc = new TextEncoder();
  return new ReadableStream({
    start(c) {
      for (const p of parts) c.enqueue(enc.encode(p));
      c.close();
    },
  });
}

async function collect(parts: string[]): Promise<string[]> {
  const out: string[] = [];
  for await (const d of readSseData(streamOf(parts))) out.push(d);
  return out;
}

Deno.test("encodeSseData() writes one data line and a blank line", () => {
  assertEquals(encodeSseData({ a: "x\ny" }), 'data: {"a":"x\\ny"}\n\n');
  assertEquals(SSE_DONE, "data: [DONE]\n\n");
});

Deno.test("readSseData() reassembles events split anywhere, with any line ending", async () => {
  const text = encodeSseData({ n: 1 }) + ": comment\n\n" + "event: x\r\ndata: 2\r\n\r\n" +
    "data: a\ndata: b\n\n" + SSE_DONE;
  const expected = ['{"n":1}', "2", "a\nb", "[DONE]"];
  assertEquals(await collect([text]), expected);
  // Every split point, including between "\r" and "\n".
  for (let i = 1; i < text.length; i++) {
    assertEquals(await collect([text.slice(0, i), text.slice(i)]), expected, `split at ${i}`);
  }
  assertEquals(await collect(["data: last"]), ["last"]);
});
