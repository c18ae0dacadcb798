// The playground script's chat and embeddings tabs: a streamed chat and a cosine-similarity
// matrix. A part of the script _page_js.ts joins; uses the names _page_js_shared.ts defines.
export const CHAT_EMBED_JS: string = String.raw`
  // ---- chat ----
  let history = [];
  let running = null;

  function addMessage(role, text) {
    const item = el("div", null, "message " + role);
    item.append(el("div", role === "user" ? "You" : role === "assistant" ? "Assistant" : role, "role"));
    const body = el("div", text, "content");
    item.append(body);
    $("chat-log").append(item);
    item.scrollIntoView({ block: "end" });
    return { item, body };
  }

  async function sendChat() {
    const input = $("chat-input");
    const text = input.value.trim();
    const model = $("chat-model").value;
    if (text === "" || running) return;
    if (!model) {
      showStatus("chat-status", "Pick a chat model first.", true);
      return;
    }
    input.value = "";
    addMessage("user", text);
    // This conversation: "Clear" starts a new one, which this answer must not join.
    const conversation = history;
    conversation.push({ role: "user", content: text });
    const answer = addMessage("assistant", "");
    answer.item.classList.add("streaming");
    const system = $("chat-system").value.trim();
    const request = {
      model,
      messages: system ? [{ role: "system", content: system }, ...conversation] : conversation,
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: Number($("chat-max-tokens").value) || 128,
      temperature: Number($("chat-temperature").value),
    };
    running = new AbortController();
    $("chat-send").disabled = true;
    $("chat-stop").disabled = false;
    showStatus("chat-status", "Generating...");
    const started = performance.now();
    let first = null;
    let tokens = 0;
    let usage = null;
    let reply = "";
    try {
      const res = await postJson("/v1/chat/completions", request, running.signal);
      for await (const event of sseEvents(res)) {
        if (event.error) throw new ApiError(event.error.message || "The stream failed.");
        if (event.usage) usage = event.usage;
        for (const choice of event.choices || []) {
          const piece = (choice.delta && choice.delta.content) || "";
          if (piece === "") continue;
          if (first === null) first = performance.now();
          tokens++;
          reply += piece;
          answer.body.textContent = reply;
          answer.item.scrollIntoView({ block: "end" });
        }
      }
      conversation.push({ role: "assistant", content: reply });
      const count = usage ? usage.completion_tokens : tokens;
      const seconds = (performance.now() - (first ?? started)) / 1000;
      showStatus(
        "chat-status",
        count + " tokens, " + (seconds > 0 ? (count / seconds).toFixed(1) : "-") + " tokens/s" +
          (first !== null ? ", first token after " + Math.round(first - started) + " ms" : ""),
      );
    } catch (err) {
      const stopped = err.name === "AbortError";
      if (reply) conversation.push({ role: "assistant", content: reply });
      else conversation.pop(); // the question stays on screen, but unanswered it is not sent again
      answer.item.classList.add(stopped ? "stopped" : "failed");
      if (!reply) answer.body.textContent = stopped ? "(stopped)" : err.message;
      // Cleared: the log and the status belong to the new conversation now.
      if (conversation === history) {
        showStatus("chat-status", stopped ? "Stopped." : err.message, !stopped);
      }
    } finally {
      answer.item.classList.remove("streaming");
      running = null;
      $("chat-send").disabled = false;
      $("chat-stop").disabled = true;
      input.focus();
    }
  }

  // Server-sent events of a streamed answer, as parsed JSON objects, until [DONE].
  async function* sseEvents(res) {
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let pending = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      const lines = (pending + value).split("\n");
      pending = lines.pop();
      for (const line of lines) {
        if (!line.startsWith("data:")) continue;
        const data = line.slice(5).trim();
        if (data === "[DONE]") return;
        yield JSON.parse(data);
      }
    }
  }

  $("chat-form").addEventListener("submit", (event) => {
    event.preventDefault();
    sendChat();
  });
  $("chat-input").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      $("chat-form").requestSubmit();
    }
  });
  $("chat-stop").addEventListener("click", () => running && running.abort());
  $("chat-clear").addEventListener("click", () => {
    if (running) running.abort();
    history = [];
    $("chat-log").replaceChildren();
    showStatus("chat-status", "");
    $("chat-input").focus();
  });

  // ---- embeddings: cosine-similarity matrix ----
  function cosine(a, b) {
    let dot = 0, na = 0, nb = 0;
    for (let i = 0; i < a.length; i++) {
      dot += a[i] * b[i];
      na += a[i] * a[i];
      nb += b[i] * b[i];
    }
    return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
  }

  function shorten(text) {
    return text.length > 40 ? text.slice(0, 39) + "\u2026" : text;
  }

  function renderMatrix(texts, vectors) {
    const table = el("table", null, "matrix");
    table.append(el("caption", "Cosine similarity (1 = same direction)"));
    const head = el("tr");
    head.append(el("th", ""));
    texts.forEach((t, i) => {
      const th = el("th", String(i + 1));
      th.scope = "col";
      th.title = t;
      head.append(th);
    });
    const thead = el("thead");
    thead.append(head);
    table.append(thead);
    const body = el("tbody");
    texts.forEach((t, i) => {
      const row = el("tr");
      const th = el("th", (i + 1) + ". " + shorten(t));
      th.scope = "row";
      th.title = t;
      row.append(th);
      texts.forEach((_, j) => {
        const s = cosine(vectors[i], vectors[j]);
        const td = el("td", s.toFixed(3));
        td.title = "text " + (i + 1) + " vs text " + (j + 1) + ": " + s.toFixed(4);
        // CSSOM, not a style attribute: allowed by the page's CSP.
        const light = 96 - Math.max(0, s) * 56;
        td.style.backgroundColor = "hsl(" + (s >= 0 ? 212 : 8) + ", 70%, " + light + "%)";
        if (light < 60) td.classList.add("dark");
        row.append(td);
      });
      body.append(row);
    });
    table.append(body);
    $("embed-result").replaceChildren(table);
  }

  $("embed-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const texts = $("embed-input").value.split("\n").map((t) => t.trim()).filter((t) => t);
    const model = $("embed-model").value;
    if (!model) return showStatus("embed-status", "Pick an embedding model first.", true);
    if (texts.length === 0) return showStatus("embed-status", "Enter at least one text.", true);
    $("embed-send").disabled = true;
    showStatus("embed-status", "Embedding " + texts.length + " texts...");
    try {
      const res = await postJson("/v1/embeddings", { model, input: texts });
      const body = await res.json();
      const vectors = body.data.slice().sort((a, b) => a.index - b.index).map((d) => d.embedding);
      renderMatrix(texts, vectors);
      showStatus(
        "embed-status",
        texts.length + " texts, " + vectors[0].length + " dimensions, " +
          ((body.usage && body.usage.prompt_tokens) ?? "?") + " tokens.",
      );
    } catch (err) {
      showStatus("embed-status", err.message, true);
    } finally {
      $("embed-send").disabled = false;
    }
  });
  $("embed-input").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      $("embed-form").requestSubmit();
    }
  });
`;
