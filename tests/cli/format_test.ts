import { assert, assertEquals, assertMatch } from "../_assert.ts";
import {
  formatBytes,
  formatDuration,
  formatRate,
  formatTable,
  ProgressBar,
} from "../../src/cli/_format.ts";

Deno.test("formatBytes() uses binary units with three significant digits", () => {
  assertEquals(formatBytes(0), "0 B");
  assertEquals(formatBytes(1023), "1023 B");
  assertEquals(formatBytes(1024), "1.00 KiB");
  assertEquals(formatBytes(1536), "1.50 KiB");
  assertEquals(formatBytes(20 * 1024 * 1024 + 1), "20.0 MiB");
  assertEquals(formatBytes(300 * 1024 ** 3), "300 GiB");
  assertEquals(formatBytes(-1), "?");
  assertEquals(formatBytes(NaN), "?");
});

Deno.test("formatDuration() and formatRate() show unknown values as --", () => {
  assertEquals(formatDuration(0), "0s");
  assertEquals(formatDuration(59.4), "59s");
  assertEquals(formatDuration(185), "3m05s");
  assertEquals(formatDuration(7620), "2h07m");
  assertEquals(formatDuration(null), "--");
  assertEquals(formatDuration(Infinity), "--");
  assertEquals(formatRate(2.5 * 1024 * 1024), "2.50 MiB/s");
  assertEquals(formatRate(null), "--");
});

Deno.test("formatTable() pads columns, right-aligns the asked ones and leaves no trailing spaces", () => {
  const table = formatTable(["ID", "SIZE", "PATH"], [["a", "1 B", "/x"], [
    "long-id",
    "10.0 KiB",
    "",
  ]], {
    alignRight: [1],
  });
  assertEquals(table.split("\n"), [
    "ID           SIZE  PATH",
    "-------  --------  ----",
    "a             1 B  /x",
    "long-id  10.0 KiB",
  ]);
});

function fakeBar(tty: boolean) {
  let now = 0;
  const out: string[] = [];
  const bar = new ProgressBar({
    tty,
    write: (t) => out.push(t),
    now: () => now,
    ttyIntervalMs: 100,
    plainIntervalMs: 2000,
    barWidth: 10,
  });
  return { bar, out, tick: (ms: number) => (now += ms) };
}

Deno.test("ProgressBar on a terminal redraws one line with \\r, throttled, with speed and ETA", () => {
  const { bar, out, tick } = fakeBar(true);
  const MiB = 1024 * 1024;
  bar.update({ done: 0, total: 10 * MiB, label: "model.onnx" });
  assertEquals(out, ["\rmodel.onnx  [----------]    0%  0 B / 10.0 MiB  --  ETA --"]);
  tick(50);
  bar.update({ done: MiB / 2, total: 10 * MiB, label: "model.onnx" });
  assertEquals(out.length, 1, "throttled: no redraw within 100 ms");
  tick(950);
  bar.update({ done: 2 * MiB, total: 10 * MiB, label: "model.onnx" });
  // 2 MiB in 1 s: 2 MiB/s; 8 MiB left: 4 s.
  assertEquals(out[1], "\rmodel.onnx  [##--------]   20%  2.00 MiB / 10.0 MiB  2.00 MiB/s  ETA 4s");
  tick(1000);
  bar.update({ done: 10 * MiB, total: 10 * MiB, label: "x" });
  assertMatch(
    out[2],
    /^\rx {2}\[##########\] {2}100% {2}10\.0 MiB \/ 10\.0 MiB {2}[\d.]+ MiB\/s {2}ETA 0s +$/,
  );
  assert(out[2].length === out[1].length, "a shorter line is padded to cover the previous one");
  bar.log("done: model.onnx");
  assertEquals(out[3], `\r${" ".repeat(out[2].length - 1)}\rdone: model.onnx\n`);
  assertMatch(out[4], /^\rx {2}\[##########\]/, "the bar comes back under the message");
  bar.finish("all done");
  assertEquals(out.slice(-2), ["\n", "all done\n"]);
});

Deno.test("ProgressBar without a terminal prints plain lines at most every plainIntervalMs", () => {
  const { bar, out, tick } = fakeBar(false);
  bar.update({ done: 0, total: 100 });
  for (let i = 1; i <= 10; i++) {
    tick(500);
    bar.update({ done: i * 10, total: 100 });
  }
  // Drawn at t=0, 2000, 4000: three lines over 5 s, each ending in a newline, no \r.
  assertEquals(out.length, 3);
  assert(out.every((l) => l.endsWith("\n") && !l.includes("\r")));
  assertMatch(out[1], /40% {2}40 B \/ 100 B {2}20 B\/s {2}ETA 3s/);
  bar.finish();
  assertEquals(out.length, 4, "finish prints the final state not printed yet");
  assertMatch(out[3], /100%/);
  bar.finish();
  assertEquals(out.length, 4, "nothing new to print");
});

Deno.test("ProgressBar with an unknown total shows bytes and speed, and cuts lines to the terminal width", () => {
  const out: string[] = [];
  let now = 0;
  const bar = new ProgressBar({
    tty: true,
    write: (t) => out.push(t),
    now: () => now,
    columns: 20,
  });
  bar.update({ done: 2048, total: null, label: "a-very-long-file-name.onnx" });
  now += 1000;
  bar.update({ done: 4096, total: null }, true);
  assertEquals(bar.speed(), 2048);
  assert(out.every((l) => l.replace("\r", "").trimEnd().length <= 19));
  assertMatch(out[1], /2\.00 KiB\/s {2}ETA --$/);
});
