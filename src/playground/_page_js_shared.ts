// The playground script's first part: what every tab shares (the API key, API calls, the tabs,
// the model pickers, status lines). Opens the script's one closure, closed in _page_js.ts, which
// joins the parts: the later parts use the names defined here ($, el, api, showStatus...).
export const SHARED_JS: string = String.raw`"use strict";
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
`;
