import { assertEquals, assertRejects } from "../../_assert.ts";
import { EventQueue } from "../../../src/engine/chat/event_queue.ts";

Deno.test("EventQueue delivers pushed items in order, then ends", async () => {
  const q = new EventQueue<number>();
  q.push(1);
  setTimeout(() => {
    q.push(2);
    q.end();
  }, 1);
  const seen: number[] = [];
  for await (const x of q) seen.push(x);
  assertEquals(seen, [1, 2]);
});

Deno.test("EventQueue rethrows a failure after the items before it", async () => {
  const q = new EventQueue<number>();
  q.push(1);
  q.fail(new RangeError("nope"));
  const seen: number[] = [];
  await assertRejects(async () => {
    for await (const x of q) seen.push(x);
  }, RangeError);
  assertEquals(seen, [1]);
});

Deno.test("EventQueue calls onCancel when the consumer stops early", async () => {
  let cancelled = 0;
  const q = new EventQueue<number>(() => cancelled++);
  q.push(1);
  q.push(2);
  for await (const _ of q) break;
  assertEquals(cancelled, 1);
});
