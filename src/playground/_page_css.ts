// The playground's style sheet, served as /playground/app.css. System fonts only (works offline).
export const PLAYGROUND_CSS: string = `:root {
  color-scheme: light dark;
  --bg: #f6f7f9;
  --panel: #ffffff;
  --text: #1b1f24;
  --muted: #5b6470;
  --border: #d5dae1;
  --accent: #2463d6;
  --accent-text: #ffffff;
  --user: #e8f0fe;
  --error: #b42318;
  --ok: #1a7f37;
  --warn: #9a6700;
  font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
}
@media (prefers-color-scheme: dark) {
  :root {
    --bg: #111418;
    --panel: #1a1f26;
    --text: #e6e9ee;
    --muted: #9aa4b1;
    --border: #2e3641;
    --accent: #5b8def;
    --user: #1f2f4a;
    --error: #ff7b72;
    --ok: #3fb950;
    --warn: #d29922;
  }
}
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--text); }
header {
  display: flex; flex-wrap: wrap; align-items: center; gap: 0.5rem 1.5rem; padding: 0.6rem 1.25rem;
  background: var(--panel); border-bottom: 1px solid var(--border);
}
h1 { font-size: 1.2rem; margin: 0; letter-spacing: 0.02em; }
h3 { font-size: 1rem; margin: 1.25rem 0 0.5rem; }
nav { display: flex; flex-wrap: wrap; gap: 0.25rem; flex: 1; min-width: 0; }
/* Narrow screens (a 390 px phone): the tabs get a row of their own, nothing overflows. */
@media (max-width: 520px) {
  header { padding: 0.5rem 0.75rem; gap: 0.5rem; }
  header h1 { flex: 1; }
  nav { order: 3; flex-basis: 100%; }
  main { padding: 0.75rem; }
}
.notice {
  margin: 0; padding: 0.45rem 0.75rem; border: 1px solid var(--warn); border-radius: 6px;
  color: var(--warn); font-size: 0.9rem;
}
.notice[hidden] { display: none; }
main { max-width: 1100px; margin: 0 auto; padding: 1rem 1.25rem; }
section { display: flex; flex-direction: column; gap: 0.75rem; }
section[hidden] { display: none; }
button, input, select, textarea { font: inherit; color: inherit; }
button {
  border: 1px solid var(--accent); background: var(--accent); color: var(--accent-text);
  border-radius: 6px; padding: 0.4rem 0.9rem; cursor: pointer;
}
button.secondary, [role=tab] { background: transparent; color: var(--text); border-color: var(--border); }
[role=tab][aria-selected=true] { background: var(--accent); color: var(--accent-text); border-color: var(--accent); }
button:disabled { opacity: 0.5; cursor: default; }
:focus-visible { outline: 2px solid var(--accent); outline-offset: 2px; }
input, select, textarea {
  background: var(--panel); border: 1px solid var(--border); border-radius: 6px; padding: 0.35rem 0.5rem;
}
textarea { width: 100%; resize: vertical; }
label { display: inline-flex; flex-direction: column; gap: 0.2rem; font-size: 0.85rem; color: var(--muted); }
label > * { color: var(--text); font-size: 1rem; }
.toolbar { display: flex; flex-wrap: wrap; align-items: flex-end; gap: 0.75rem; }
.toolbar .grow { flex: 1; min-width: 12rem; }
.toolbar input[type=number] { width: 7rem; }
.log {
  min-height: 16rem; max-height: 60vh; overflow-y: auto; padding: 0.75rem; display: flex;
  flex-direction: column; gap: 0.6rem; background: var(--panel); border: 1px solid var(--border);
  border-radius: 8px;
}
.log:empty::before { content: "Say something to the model."; color: var(--muted); }
.message { max-width: 85%; padding: 0.5rem 0.75rem; border-radius: 8px; border: 1px solid var(--border); }
.message.user { align-self: flex-end; background: var(--user); }
.message.assistant { align-self: flex-start; }
.message .role { font-size: 0.75rem; color: var(--muted); margin-bottom: 0.2rem; }
.message .content { white-space: pre-wrap; overflow-wrap: anywhere; }
.message.streaming .content::after { content: "\\258D"; color: var(--accent); }
.message.failed { border-color: var(--error); color: var(--error); }
.message.stopped .role::after { content: " (stopped)"; }
.composer { display: flex; gap: 0.5rem; align-items: flex-end; }
.composer .buttons, dialog .buttons { display: flex; gap: 0.5rem; }
.status { margin: 0; min-height: 1.2em; font-size: 0.85rem; color: var(--muted); }
.status.error { color: var(--error); }
.table-wrap { overflow-x: auto; }
table { border-collapse: collapse; background: var(--panel); font-size: 0.9rem; }
caption { text-align: left; padding: 0.3rem 0; color: var(--muted); font-size: 0.85rem; }
th, td { border: 1px solid var(--border); padding: 0.35rem 0.6rem; text-align: left; }
thead th { background: var(--bg); }
table.matrix td { text-align: right; font-variant-numeric: tabular-nums; color: #1b1f24; min-width: 4.5rem; }
table.matrix td.dark { color: #ffffff; }
table.matrix tbody th { max-width: 22rem; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
#dash-engines, #dash-queues, #dash-usage { width: 100%; }
#dash-usage td.num { text-align: right; font-variant-numeric: tabular-nums; }
#dash-usage th[scope=row] { vertical-align: top; }
.key-prefix { display: block; font-family: ui-monospace, monospace; font-size: 0.8rem; color: var(--muted); font-weight: normal; }
.summary { display: flex; flex-wrap: wrap; gap: 0.75rem; margin: 0; }
.summary div {
  background: var(--panel); border: 1px solid var(--border); border-radius: 8px; padding: 0.5rem 0.9rem;
  min-width: 8rem;
}
.summary dt { font-size: 0.8rem; color: var(--muted); }
.summary dd { margin: 0; font-size: 1.3rem; font-variant-numeric: tabular-nums; }
.badge { display: inline-block; padding: 0.05rem 0.5rem; border-radius: 999px; font-size: 0.8rem; border: 1px solid currentColor; }
.state-ready, .state-registered, .health-healthy, .circuit-closed { color: var(--ok); }
.state-starting, .health-unknown, .circuit-half_open { color: var(--warn); }
.state-error, .state-stopped, .health-unhealthy, .circuit-open, .key-revoked { color: var(--error); }
dialog { border: 1px solid var(--border); border-radius: 10px; background: var(--panel); color: var(--text); max-width: 26rem; }
dialog::backdrop { background: rgb(0 0 0 / 0.4); }
dialog form { display: flex; flex-direction: column; gap: 0.6rem; }
dialog h2 { margin: 0; font-size: 1.1rem; }
.hint { font-size: 0.8rem; color: var(--muted); margin: 0; }
.visually-hidden {
  position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap;
}
`;
