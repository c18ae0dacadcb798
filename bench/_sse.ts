/**
 * Reading server-sent event streams in the benchmarks, and a fetch that survives llama-server
 * closing a kept-alive connection.
 *
 * @module
 */

/**
 * The `data:` payloads of a server-sent event stream, each with the time its bytes arrived
 * (events without data are skipped).
 */
export async function* sseData(
  body: ReadableStream<Uint8Array>,
): AsyncGenerator<{ data: string; at: number }> {
  const decoder = new TextDecoder();
  let buffered = "";
  for await (const bytes of body) {
    const at = performance.now();
    buffered += decoder.decode(bytes, { stream: true });
    let cut: number;
    while ((cut = buffered.indexOf("\n\n")) >= 0) {
      const event = buffered.slice(0, cut);
      buffered = buffered.slice(cut + 2);
      const data = event.split("\n").find((l) => l.startsWith("data: "))?.slice(6);
      if (data) yield { data, at };
    }
  }
}

/**
 * `fetch`, sent once more when it fails before any response: llama-server can close a kept-alive
 * connection just as the next request goes out on it ("connection closed before message
 * completed"), which ended a benchmark run.
 */
export async function fetchRetryingClosed(url: string, init: RequestInit): Promise<Response> {
  try {
    return await fetch(url, init);
  } catch (err) {
    if (init.signal?.aborted) throw err;
    return await fetch(url, init);
  }
}
