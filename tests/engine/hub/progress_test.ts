import { DownloadProgress, type HubProgressEvent } from "../../../src/engine/hub/progress.ts";
import { assertEquals } from "../../_assert.ts";

Deno.test("DownloadProgress holds the bar when a file restarts from 0", () => {
  const events: HubProgressEvent[] = [];
  const p = new DownloadProgress(
    "o/n",
    "main",
    [{ path: "a", size: 100 }, { path: "b", size: 50 }],
    {
      onProgress: (e) => events.push(e),
      intervalMs: 0,
    },
  );
  p.start();
  p.fileStart("a", 0, 100);
  p.fileBytes("a", 60, 100);
  p.fileStart("a", 0, 100); // the server ignored the resume
  p.fileBytes("a", 30, 100); // below the old mark: no event
  p.fileBytes("a", 80, 100);
  p.fileDone("a", 100, false);
  p.fileDone("b", 50, true);
  p.done("/x");
  assertEquals(events.map((e) => [e.kind, e.bytesDone, e.filesDone]), [
    ["start", 0, 0],
    ["file_start", 0, 0],
    ["file_progress", 60, 0],
    ["file_start", 60, 0],
    ["file_progress", 80, 0],
    ["file_done", 100, 1],
    ["file_done", 150, 2],
    ["done", 150, 2],
  ]);
  assertEquals(events.every((e) => e.bytesTotal === 150 && e.filesTotal === 2), true);
});

Deno.test("DownloadProgress throttles file_progress but never file_start or file_done", () => {
  const events: HubProgressEvent[] = [];
  const p = new DownloadProgress("o/n", "main", [{ path: "a", size: null }], {
    onProgress: (e) => events.push(e),
    intervalMs: 60_000,
  });
  p.fileStart("a", 0, null);
  for (let i = 1; i <= 100; i++) p.fileBytes("a", i, null);
  p.fileDone("a", 100, false);
  assertEquals(events.map((e) => e.kind), ["file_start", "file_progress", "file_done"]);
  assertEquals(events[0].bytesTotal, null);
  assertEquals(events[2].bytesTotal, 100);
});
