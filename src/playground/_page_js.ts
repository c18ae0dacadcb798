// The playground's script, served as /playground/app.js. Plain browser JavaScript (no build, no
// dependency); it never inserts server text as HTML (textContent only).
export const PLAYGROUND_JS: string = String.raw`"use strict";
(() => {
  const KEY_STORE = "svc.apiKey";
  const $ = (id) => document.getElementById(id);
  const el = (tag, text, className) => {
    const node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = String(text);
    if (className) node.className = className;
    return node;
  };

  // ---- API key: asked for on 401, kept in sessionStorage, sent as a bearer token ----
  let keyPrompt = null;

  function askForKey(message) {
    if (keyPrompt) return keyPrompt;
    const dialog = $("key-dialog");
    const input = $("key-input");
    $("key-message").textContent = message;
    input.value = "";
    keyPrompt = new Promise((resolve) => {
      const finish = (value) => {
        $("key-form").onsubmit = null;
        $("key-cancel").onclick = null;
        dialog.onclose = null;
        if (dialog.open) dialog.close();
        keyPrompt = null;
        resolve(value);
      };
      $("key-form").onsubmit = (event) => {
        event.preventDefault();
        const key = input.value.trim();
        if (key === "") return;
        sessionStorage.setItem(KEY_STORE, key);
        finish(key);
      };
      $("key-cancel").onclick = () => finish(null);
      dialog.onclose = () => finish(null);
    });
    dialog.showModal();
    input.focus();
    return keyPrompt;
  }

  // An error answer, with the server's message; needsKey: a 401 and no key was given.
  class ApiError extends Error {
    constructor(message, needsKey = false) {
      super(message);
      this.needsKey = needsKey;
    }
  }

  async function errorMessage(res) {
    const text = await res.text().catch(() => "");
    try {
      const body = JSON.parse(text);
      if (body && body.error && body.error.message) {
        return "HTTP " + res.status + ": " + body.error.message;
      }
    } catch { /* not JSON */ }
    return "HTTP " + res.status + (text ? ": " + text.slice(0, 300) : "");
  }

  // fetch() with the key; on 401 asks for a key and tries again. Throws ApiError on an error
  // answer, with the server's message.
  async function api(path, init = {}) {
    for (;;) {
      const headers = new Headers(init.headers);
      const key = sessionStorage.getItem(KEY_STORE);
      if (key) headers.set("Authorization", "Bearer " + key);
      const res = await fetch(path, { ...init, headers });
      if (res.ok) return res;
      if (res.status !== 401) throw new ApiError(await errorMessage(res));
      const reason = await errorMessage(res);
      const entered = await askForKey(
        key ? "The key was refused (" + reason + "). Enter the server's API key." :
          "This server needs an API key.",
      );
      if (entered === null) throw new ApiError(reason + " (no API key given)", true);
    }
  }

  async function postJson(path, body, signal) {
    return await api(path, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body),
      signal,
    });
  }

  // ---- tabs (arrow keys move between them, as in the ARIA tabs pattern) ----
  const tabs = [...document.querySelectorAll("[role=tab]")];
  const onShow = {};

  function selectTab(tab, focus) {
    for (const t of tabs) {
      const selected = t === tab;
      t.setAttribute("aria-selected", String(selected));
      t.tabIndex = selected ? 0 : -1;
      $(t.getAttribute("aria-controls")).hidden = !selected;
    }
    if (focus) tab.focus();
    const show = onShow[tab.id];
    if (show) show();
  }

  for (const tab of tabs) {
    tab.addEventListener("click", () => selectTab(tab, false));
    tab.addEventListener("keydown", (event) => {
      const i = tabs.indexOf(tab);
      const next = { ArrowRight: i + 1, ArrowLeft: i - 1, Home: 0, End: tabs.length - 1 }[event.key];
      if (next === undefined) return;
      event.preventDefault();
      selectTab(tabs[(next + tabs.length) % tabs.length], true);
    });
  }
  const current = () => tabs.find((t) => t.getAttribute("aria-selected") === "true");

  // ---- models ----
  // Listed at load, when the chat or embeddings tab is shown, and every few seconds while none is
  // listed: the gateway may be up before its engines, or a health probe may find one down for a
  // while, and the pickers would otherwise stay empty until the page is reloaded.
  const MODELS_RETRY_MS = 3000;
  let modelsRound = 0;
  let modelsRetry = null;
  async function loadModels() {
    clearTimeout(modelsRetry);
    const round = ++modelsRound;
    let models = [];
    let failure = null;
    let needsKey = false;
    try {
      const res = await api("/v1/models");
      models = (await res.json()).data || [];
    } catch (err) {
      failure = err.message;
      needsKey = err.needsKey;
    }
    if (round !== modelsRound) return; // a later listing is under way or done
    // Without a key given, the API key button lists them again (no prompt every few seconds).
    if (models.length === 0 && !needsKey) modelsRetry = setTimeout(loadModels, MODELS_RETRY_MS);
    const chat = models.filter((m) => m.kind !== "embedding" && m.kind !== "rerank");
    randomWeights.clear();
    for (const m of models) if (m.random_weights) randomWeights.add(m.id);
    fillModels($("chat-model"), chat, "chat", failure);
    fillModels($("embed-model"), models.filter((m) => m.kind === "embedding"), "embedding", failure);
    showWeightsNotice("chat");
    showWeightsNotice("embedding");
  }

  // A demo model's weights are random: say so beside its picker, in words, while it is picked.
  const randomWeights = new Set();
  function showWeightsNotice(kind) {
    const chat = kind === "chat";
    const select = $(chat ? "chat-model" : "embed-model");
    const notice = $(chat ? "chat-notice" : "embed-notice");
    if (!select || !notice) return;
    const random = randomWeights.has(select.value);
    notice.hidden = !random;
    notice.textContent = random
      ? select.value + " has RANDOM weights (a generated demo model): its " +
        (chat ? "answers are" : "similarities are") + " meaningless; only its timings are real. " +
        "Serve a real model (svc llm serve --model <hub id>" +
        (chat ? "" : " --embedding-model <hub id>") + ") for real ones."
      : "";
  }
  $("chat-model").addEventListener("change", () => showWeightsNotice("chat"));
  $("embed-model").addEventListener("change", () => showWeightsNotice("embedding"));

  const listingFailure = {};
  function fillModels(select, models, kind, failure) {
    const previous = select.value;
    select.replaceChildren();
    for (const m of models) {
      const notReady = m.status && m.status !== "ready";
      const option = el(
        "option",
        m.id + (notReady ? " (" + m.status + ")" : "") +
          (m.random_weights ? " — random weights" : ""),
      );
      option.value = m.id;
      select.append(option);
    }
    const status = kind === "chat" ? "chat-status" : "embed-status";
    if (models.length === 0) {
      const option = el("option", failure ? "Could not list models" : "No " + kind + " model");
      option.value = "";
      select.append(option);
      select.disabled = true;
      if (failure) showStatus(status, failure, true);
      listingFailure[status] = failure;
    } else {
      // The listing's own earlier failure is over; any other message stays.
      if (listingFailure[status] && $(status).textContent === listingFailure[status]) {
        showStatus(status, "");
      }
      listingFailure[status] = null;
      select.disabled = false;
      if (models.some((m) => m.id === previous)) select.value = previous;
    }
  }

  function showStatus(id, text, isError) {
    const node = $(id);
    if (!node) return;
    node.textContent = text;
    node.classList.toggle("error", Boolean(isError));
  }

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

  // ---- dashboard: polls the gateway's JSON status while visible ----
  const POLL_MS = 2000;
  let polling = null;

  function badge(text, kind) {
    return el("span", text ?? "-", "badge " + kind + "-" + String(text ?? "none"));
  }

  function cell(content) {
    const td = el("td");
    if (content instanceof Node) td.append(content);
    else td.textContent = content === null || content === undefined ? "-" : String(content);
    return td;
  }

  function renderDashboard(d) {
    const summary = [
      ["Ready", d.ready ? "yes" : "no"],
      ["Tokens/s", d.tokens_per_s.toFixed(1)],
      ["Generated tokens", d.generated_tokens],
      ["Requests", d.requests],
      ["Failed", d.failed],
      ["Retries", d.retries],
      ["Policy", d.policy],
      ["Uptime", formatUptime(d.uptime_s)],
    ];
    $("dash-summary").replaceChildren(...summary.flatMap(([k, v]) => {
      const div = el("div");
      div.append(el("dt", k), el("dd", v));
      return [div];
    }));
    const engines = $("dash-engines").tBodies[0];
    engines.replaceChildren(...d.engines.map((e) => {
      const row = el("tr");
      row.dataset.engine = e.id;
      const name = el("th", e.id);
      name.scope = "row";
      if (e.message) name.title = e.message;
      row.append(
        name,
        cell(e.kind),
        cell(e.models.join(", ")),
        cell(badge(e.state, "state")),
        cell(badge(e.health, "health")),
        cell(badge(e.circuit, "circuit")),
        cell(e.in_flight + (e.max_concurrency ? " / " + e.max_concurrency : "")),
        cell(e.requests),
        cell(e.errors),
        cell(e.latency_ms === null ? null : e.latency_ms + " ms"),
        cell(e.kind === "embedding" ? null : e.tokens_per_s.toFixed(1)),
        cell(
          e.kind === "embedding" || !e.prompt_tokens
            ? null
            : Math.round((100 * e.cached_prompt_tokens) / e.prompt_tokens) + "%",
        ),
      );
      return row;
    }));
    if (d.engines.length === 0) {
      const row = el("tr");
      const td = cell("No engine yet.");
      td.colSpan = 12;
      row.append(td);
      engines.append(row);
    }
    $("dash-queues").tBodies[0].replaceChildren(...d.queues.map((q) => {
      const row = el("tr");
      const name = el("th", q.name);
      name.scope = "row";
      row.append(name, cell(q.length + " / " + q.capacity), cell(q.rejected));
      return row;
    }));
    renderUsage(d.usage);
    showStatus("dash-status", "Updated " + new Date().toLocaleTimeString());
  }

  // Today's usage per managed key and model (absent without managed keys): one row per key and
  // model, the key and its limits spanning its rows. Never a secret: name, prefix and id only.
  function renderUsage(u) {
    $("dash-usage-section").hidden = !u;
    if (!u) return;
    $("dash-usage-day").textContent = u.day;
    const rows = u.keys.flatMap((k) => {
      const models = k.models.length ? k.models : [null];
      return models.map((m, i) => {
        const row = el("tr");
        row.dataset.key = k.id;
        row.dataset.model = m ? m.model : "";
        if (i === 0) {
          const name = el("th", k.name);
          name.scope = "row";
          name.rowSpan = models.length;
          name.title = k.id + " (" + k.scope + ")";
          name.append(el("span", k.prefix + "…", "key-prefix"));
          if (k.revoked) name.append(" ", badge("revoked", "key"));
          row.append(name);
        }
        row.append(
          cell(m ? m.model : "no requests today"),
          numCell(m ? m.requests : 0, "requests"),
          numCell(m ? m.prompt_tokens : 0, "prompt-tokens"),
          numCell(m ? m.completion_tokens : 0, "completion-tokens"),
        );
        if (i === 0) {
          const limits = cell(limitText(k));
          limits.rowSpan = models.length;
          row.append(limits);
        }
        return row;
      });
    });
    if (rows.length === 0) {
      const row = el("tr");
      const td = cell("No key is in use today.");
      td.colSpan = 6;
      row.append(td);
      rows.push(row);
    }
    $("dash-usage").tBodies[0].replaceChildren(...rows);
    const notes = [];
    if (u.omitted_keys) notes.push(u.omitted_keys + " more keys not shown.");
    notes.push("Usage as of " + new Date(u.updated * 1000).toLocaleTimeString() + ".");
    if (u.error) notes.push("Could not refresh: " + u.error);
    showStatus("dash-usage-note", notes.join(" "), Boolean(u.error));
  }

  function numCell(n, className) {
    const td = cell(n.toLocaleString("en-US"));
    td.className = "num " + className;
    return td;
  }

  function limitText(k) {
    const parts = [];
    if (k.rpm !== null) parts.push(k.rpm.toLocaleString("en-US") + " rpm");
    if (k.tpm !== null) parts.push(k.tpm.toLocaleString("en-US") + " tpm");
    return parts.length ? parts.join(", ") : "none";
  }

  function formatUptime(s) {
    const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60);
    return (h ? h + " h " : "") + (h || m ? m + " min " : "") + (s % 60) + " s";
  }

  // False when polling should stop: the key was asked for and not given (no prompt every 2 s).
  async function refreshDashboard() {
    try {
      const res = await api("/v1/management/dashboard");
      renderDashboard(await res.json());
      return true;
    } catch (err) {
      showStatus("dash-status", err.message + (err.needsKey ? " Use the API key button." : ""), true);
      return !err.needsKey;
    }
  }

  function dashboardVisible() {
    const view = $("view-dashboard");
    return view !== null && !view.hidden && document.visibilityState === "visible";
  }

  // Each call starts a new round of polling and ends the previous one, even one whose refresh is
  // still in flight (else every tab switch during a refresh would add one more loop).
  let pollRound = 0;
  function pollDashboard() {
    clearTimeout(polling);
    const round = ++pollRound;
    if (!dashboardVisible()) return;
    refreshDashboard().then((again) => {
      if (again && round === pollRound) polling = setTimeout(pollDashboard, POLL_MS);
    });
  }
  onShow["tab-dashboard"] = pollDashboard;
  onShow["tab-chat"] = () => {
    $("chat-input").focus();
    loadModels();
  };
  onShow["tab-embeddings"] = loadModels;
  document.addEventListener("visibilitychange", pollDashboard);

  // ---- API key button ----
  $("key-button").addEventListener("click", async () => {
    const key = await askForKey("Enter the server's API key (leave the page to forget it).");
    if (key !== null) {
      loadModels();
      pollDashboard();
    }
  });

  loadModels().then(() => {
    if (current() && current().id === "tab-chat") $("chat-input").focus();
  });
})();
`;
