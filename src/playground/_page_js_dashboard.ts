// The playground script's dashboard tab: renders the gateway's status and polls it while the tab
// is visible. A part of the script _page_js.ts joins; uses the names _page_js_shared.ts defines.
export const DASHBOARD_JS: string = String.raw`
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
`;
