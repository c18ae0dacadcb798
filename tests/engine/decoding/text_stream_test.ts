import { TextStream } from "../../../src/engine/decoding/text_stream.ts";
import { Rng } from "../../../src/engine/decoding/rng.ts";
import { assert, assertEquals } from "../../_assert.ts";

const utf8 = new TextDecoder();
const encoder = new TextEncoder();

/** A fake byte-level tokenizer: token id = one byte. */
const byteDecode = (ids: number[]): string => utf8.decode(new Uint8Array(ids));

/** Streams `ids` one at a time; returns the deltas (flush last). */
function streamAll(stream: TextStream, ids: number[]): string[] {
  const deltas = ids.map((id) => stream.push(id));
  deltas.push(stream.flush());
  return deltas;
}

Deno.test("TextStream holds back a 2-byte character until its last byte arrives", () => {
  const stream = new TextStream(byteDecode);
  assertEquals(stream.push(0x63), "c");
  assertEquals(stream.push(0xc3), "");
  assertEquals(stream.pendingTokens, 1);
  assertEquals(stream.push(0xa9), "é");
  assertEquals(stream.flush(), "");
});

Deno.test("TextStream emits a 4-byte emoji split over 4 tokens once, without U+FFFD", () => {
  const text = "hi 😀 café 中文!";
  const deltas = streamAll(new TextStream(byteDecode), [...encoder.encode(text)]);
  for (const delta of deltas) assert(!delta.includes("\uFFFD"), JSON.stringify(deltas));
  assertEquals(deltas.join(""), text);
  assert(deltas.includes("😀"));
});

Deno.test("TextStream deltas concatenate to the full decode for random multi-byte tokens", () => {
  // Tokens of 1-3 bytes cut at random places, so tokens end mid-character and span characters.
  const text = "Grüße, 世界! 😀👍🏽 naïve résumé — ok. ".repeat(8);
  const bytes = [...encoder.encode(text)];
  const rng = new Rng(5);
  for (let trial = 0; trial < 20; trial++) {
    const vocab: number[][] = [];
    const ids: number[] = [];
    for (let i = 0; i < bytes.length;) {
      const len = Math.min(1 + (rng.nextUint32() % 3), bytes.length - i);
      ids.push(vocab.push(bytes.slice(i, i + len)) - 1);
      i += len;
    }
    const decode = (tokenIds: number[]): string =>
      utf8.decode(new Uint8Array(tokenIds.flatMap((id) => vocab[id])));
    const deltas = streamAll(new TextStream(decode), ids);
    for (const delta of deltas) assert(!delta.includes("\uFFFD"), `trial ${trial}`);
    assertEquals(deltas.join(""), decode(ids));
  }
});

Deno.test("TextStream releases text before an unfinished character at once", () => {
  // One token holds "ab" and the first byte of "é".
  const vocab = [[0x61, 0x62, 0xc3], [0xa9, 0x21]];
  const decode = (ids: number[]): string =>
    utf8.decode(new Uint8Array(ids.flatMap((id) => vocab[id])));
  const stream = new TextStream(decode);
  assertEquals(stream.push(0), "ab");
  assertEquals(stream.push(1), "é!");
});

Deno.test("TextStream.flush() returns an unfinished character as the full decode shows it", () => {
  const stream = new TextStream(byteDecode);
  assertEquals(stream.push([0x61, 0xf0, 0x9f]), "a");
  assertEquals(stream.flush(), "\uFFFD");
});

Deno.test("TextStream keeps a SentencePiece first-token space through its context window", () => {
  // SentencePiece-style decode: "▁" is a space; a decoded sequence loses its first space.
  const pieces = ["▁Hello", "▁world", ",", "▁again", "<skip>"];
  const decode = (ids: number[]): string =>
    ids.map((id) => pieces[id]).filter((p) => p !== "<skip>").join("").replaceAll("▁", " ")
      .replace(/^ /, "");
  const stream = new TextStream(decode, { contextIds: [0] }); // prompt ended with "▁Hello"
  assertEquals(stream.push(1), " world");
  assertEquals(stream.push(4), ""); // decodes to nothing: context is kept
  assertEquals(stream.push(3), " again");
  assertEquals(stream.push(2), ",");
  assertEquals(stream.flush(), "");
});

Deno.test("TextStream decodes a bounded window, not the whole sequence, per token", () => {
  let longest = 0;
  let decodedIds = 0;
  const decode = (ids: number[]): string => {
    longest = Math.max(longest, ids.length);
    decodedIds += ids.length;
    return byteDecode(ids);
  };
  const stream = new TextStream(decode);
  const bytes = [...encoder.encode("é😀a".repeat(2000))];
  let text = "";
  for (const id of bytes) text += stream.push(id);
  text += stream.flush();
  assertEquals(text, "é😀a".repeat(2000));
  assert(longest <= 8, `decoded a window of ${longest} ids`);
  assert(decodedIds < bytes.length * 8, `decoded ${decodedIds} ids for ${bytes.length} tokens`);
});
