// The playground's HTML. No inline script or style (the page's CSP forbids both): behaviour is
// in _page_js.ts, looks in _page_css.ts.

const DASHBOARD_TAB = `
      <button type="button" role="tab" id="tab-dashboard" aria-controls="view-dashboard"
        aria-selected="false" tabindex="-1">Dashboard</button>`;

const DASHBOARD_VIEW = `
    <section id="view-dashboard" role="tabpanel" aria-labelledby="tab-dashboard" hidden>
      <h2 class="visually-hidden">Dashboard</h2>
      <dl id="dash-summary" class="summary"></dl>
      <h3>Engines</h3>
      <div class="table-wrap">
        <table id="dash-engines">
          <thead>
            <tr>
              <th scope="col">Engine</th><th scope="col">Kind</th><th scope="col">Models</th>
              <th scope="col">State</th><th scope="col">Health</th><th scope="col">Circuit</th>
              <th scope="col">In flight</th><th scope="col">Requests</th><th scope="col">Errors</th>
              <th scope="col">Latency</th><th scope="col">Tokens/s</th>
              <th scope="col" title="Share of prompt tokens served by the engine's prefix cache">Prompt cached</th>
            </tr>
          </thead>
          <tbody></tbody>
        </table>
      </div>
      <h3>Queues</h3>
      <div class="table-wrap">
        <table id="dash-queues">
          <thead>
            <tr><th scope="col">Queue</th><th scope="col">Waiting</th><th scope="col">Refused</th></tr>
          </thead>
          <tbody></tbody>
        </table>
      </div>
      <div id="dash-usage-section" hidden>
        <h3>Usage per key, <span id="dash-usage-day"></span> (UTC)</h3>
        <div class="table-wrap">
          <table id="dash-usage">
            <thead>
              <tr>
                <th scope="col">Key</th><th scope="col">Model</th><th scope="col">Requests</th>
                <th scope="col">Prompt tokens</th><th scope="col">Completion tokens</th>
                <th scope="col" title="Requests and tokens per minute the key may use">Limits</th>
              </tr>
            </thead>
            <tbody></tbody>
          </table>
        </div>
        <p id="dash-usage-note" class="status"></p>
      </div>
      <p id="dash-status" role="status" class="status"></p>
    </section>`;

/** The page; `dashboard` adds the dashboard tab (the gateway has one, an engine server not). */
export function playgroundHtml(options: { dashboard: boolean }): string {
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Svc playground</title>
  <link rel="icon" href="data:,">
  <link rel="stylesheet" href="/playground/app.css">
  <script src="/playground/app.js" defer></script>
</head>
<body>
  <header>
    <h1>Svc</h1>
    <nav role="tablist" aria-label="Views">
      <button type="button" role="tab" id="tab-chat" aria-controls="view-chat"
        aria-selected="true">Chat</button>
      <button type="button" role="tab" id="tab-embeddings" aria-controls="view-embeddings"
        aria-selected="false" tabindex="-1">Embeddings</button>${
    options.dashboard ? DASHBOARD_TAB : ""
  }
    </nav>
    <button type="button" id="key-button" class="secondary">API key</button>
  </header>
  <main>
    <section id="view-chat" role="tabpanel" aria-labelledby="tab-chat">
      <h2 class="visually-hidden">Chat</h2>
      <div class="toolbar">
        <label>Model <select id="chat-model"></select></label>
        <label>Max tokens <input id="chat-max-tokens" type="number" min="1" max="8192"
          value="128"></label>
        <label>Temperature <input id="chat-temperature" type="number" min="0" max="2"
          step="0.1" value="0.7"></label>
        <label class="grow">System prompt <input id="chat-system" type="text"
          placeholder="optional"></label>
        <button type="button" id="chat-clear" class="secondary">New chat</button>
      </div>
      <p id="chat-notice" class="notice" role="note" hidden></p>
      <div id="chat-log" class="log" role="log" aria-live="polite" aria-label="Conversation"></div>
      <form id="chat-form" class="composer">
        <label for="chat-input" class="visually-hidden">Message</label>
        <textarea id="chat-input" rows="3"
          placeholder="Message (Enter sends, Shift+Enter starts a new line)"></textarea>
        <div class="buttons">
          <button type="submit" id="chat-send">Send</button>
          <button type="button" id="chat-stop" class="secondary" disabled>Stop</button>
        </div>
      </form>
      <p id="chat-status" role="status" class="status"></p>
    </section>
    <section id="view-embeddings" role="tabpanel" aria-labelledby="tab-embeddings" hidden>
      <h2 class="visually-hidden">Embeddings</h2>
      <form id="embed-form">
        <div class="toolbar">
          <label>Model <select id="embed-model"></select></label>
          <button type="submit" id="embed-send">Compare</button>
        </div>
        <p id="embed-notice" class="notice" role="note" hidden></p>
        <label for="embed-input">Texts, one per line</label>
        <textarea id="embed-input" rows="6">The cat sits on the mat.
A kitten is resting on the rug.
Stock markets fell sharply today.</textarea>
      </form>
      <p id="embed-status" role="status" class="status"></p>
      <div id="embed-result" class="table-wrap"></div>
    </section>${options.dashboard ? DASHBOARD_VIEW : ""}
  </main>
  <dialog id="key-dialog" aria-labelledby="key-title">
    <form id="key-form">
      <h2 id="key-title">API key</h2>
      <p id="key-message">This server needs an API key.</p>
      <label for="key-input">API key</label>
      <input id="key-input" type="password" autocomplete="off" required>
      <p class="hint">Kept in this browser tab only (sessionStorage), sent as a bearer token.</p>
      <div class="buttons">
        <button type="submit">Use key</button>
        <button type="button" id="key-cancel" class="secondary">Cancel</button>
      </div>
    </form>
  </dialog>
</body>
</html>
`;
}
