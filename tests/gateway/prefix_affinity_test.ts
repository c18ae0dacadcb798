import { assert, assertEquals, assertNotEquals } from "../_assert.ts";
import { Dispatcher } from "../../src/gateway/dispatcher.ts";
import { createSchedulingPolicy } from "../../src/gateway/scheduling.ts";
import {
  MIN_PREFIX_KEY_CHARS,
  PREFIX_KEY_CHARS,
  prefixAffinityKey,
} from "../../src/gateway/prefix_affinity.ts";
import { FakeEngine, SILENT, until } from "./_fake_backend.ts";

const SYSTEM = "You answer questions about the Example Inc. handbook, citing sections. ".repeat(30);

function conversation(system: string, turns: number): Record<string, unknown> {
  const messages = [{ role: "system", content: system }];
  for (let t = 0; t < turns; t++) {
    messages.push({ role: "user", content: `question ${t}` }, { role: "assistant", content: "ok" });
  }
  messages.push({ role: "user", content: "and then?" });
  return { model: "m", messages };
}

Deno.test("prefixAffinityKey is the head of the prompt text, the same for every turn of a conversation", () => {
  const first = prefixAffinityKey(conversation(SYSTEM, 0));
  assertEquals(first?.length, PREFIX_KEY_CHARS);
  assertEquals(prefixAffinityKey(conversation(SYSTEM, 5)), first);
  assertNotEquals(prefixAffinityKey(conversation(`Other. ${SYSTEM}`, 0)), first);
  // Completions (a string, a list of strings, token ids) and Responses (instructions, input).
  assertEquals(prefixAffinityKey({ prompt: SYSTEM }), SYSTEM.slice(0, PREFIX_KEY_CHARS));
  assertEquals(prefixAffinityKey({ prompt: [SYSTEM, "b"] }), SYSTEM.slice(0, PREFIX_KEY_CHARS));
  assert(prefixAffinityKey({ prompt: Array.from({ length: 300 }, (_, i) => i) }));
  assert(prefixAffinityKey({ instructions: SYSTEM, input: "hi" })?.startsWith("instructions"));
  assert(
    prefixAffinityKey({
      input: [{ role: "user", content: [{ type: "input_text", text: SYSTEM }] }],
    }),
  );
  // Short prompts have no key: load alone decides.
  assertEquals(prefixAffinityKey({ messages: [{ role: "user", content: "hi" }] }), undefined);
  assertEquals(prefixAffinityKey({ prompt: "x".repeat(MIN_PREFIX_KEY_CHARS - 1) }), undefined);
  assertEquals(prefixAffinityKey({}), undefined);
});

async function send(d: Dispatcher, body: Record<string, unknown>): Promise<void> {
  await (await d.dispatch({ kind: "chat", model: "m", body })).body?.cancel();
}

Deno.test("the gateway sends every turn of a conversation to one engine, and conversations to both", async () => {
  const fakes = [new FakeEngine("a"), new FakeEngine("b")];
  const d = new Dispatcher({ logger: SILENT });
  for (const fake of fakes) d.addBackend(fake.backend({ maxConcurrency: 4 }));
  try {
    const servedBy = async (body: Record<string, unknown>) => {
      const before = fakes.map((f) => f.seen.length);
      await send(d, body);
      return fakes.findIndex((f, i) => f.seen.length > before[i]);
    };
    for (let c = 0; c < 12; c++) {
      const system = `Conversation ${c}. ${SYSTEM}`;
      const home = await servedBy(conversation(system, 0));
      for (let turn = 1; turn < 4; turn++) {
        assertEquals(await servedBy(conversation(system, turn)), home, `conversation ${c}`);
      }
    }
    for (const fake of fakes) assert(fake.seen.length >= 8, "both engines got conversations");
  } finally {
    await d.close();
  }
});

Deno.test("the gateway sends a prompt elsewhere when its engine is busier than the others", async () => {
  const fakes = [new FakeEngine("a"), new FakeEngine("b")];
  const d = new Dispatcher({ logger: SILENT });
  for (const fake of fakes) d.addBackend(fake.backend({ maxConcurrency: 4 }));
  try {
    await send(d, conversation(SYSTEM, 0));
    const home = fakes.findIndex((f) => f.seen.length === 1);
    const release = fakes[home].hold();
    // The home engine fills up (1/4 more than the other is allowed; 2/4 is not).
    const held = [d.dispatch({ kind: "chat", model: "m", body: conversation(SYSTEM, 1) })];
    await until(() => fakes[home].seen.length === 2);
    held.push(d.dispatch({ kind: "chat", model: "m", body: conversation(SYSTEM, 2) }));
    await until(() => fakes[home].seen.length === 3);
    const other = fakes[1 - home];
    await send(d, conversation(SYSTEM, 3));
    assertEquals(other.seen.length, 1, "the busy engine was passed over");
    release();
    for (const res of held) await (await res).body?.cancel();
  } finally {
    await d.close();
  }
});

Deno.test("cost_optimized and sticky routing keep their own choice over prefix affinity", () => {
  const local = new FakeEngine("local").backend({ local: true });
  const remote = new FakeEngine("remote").backend({ local: false });
  const candidates = [local, remote];
  const adaptive = createSchedulingPolicy("adaptive");
  // A prompt whose affine instance is the remote one.
  const prefixKey = Array.from({ length: 50 }, (_, i) => `${SYSTEM}${i}`).find((key) =>
    adaptive.select(candidates, { utilization: 0, prefixKey: key }) === remote
  );
  assert(prefixKey !== undefined);
  const context = { utilization: 0, prefixKey };
  assertEquals(createSchedulingPolicy("cost_optimized").select(candidates, context), local);
  const sticky = createSchedulingPolicy("fifo", { routing: "sticky" });
  const byUser = ["u1", "u2", "u3", "u4", "u5", "u6"].map((userKey) =>
    sticky.select(candidates, { ...context, userKey })
  );
  assert(byUser.includes(local) && byUser.includes(remote), "users spread by their key");
});
