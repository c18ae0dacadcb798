// The playground's script, served as /playground/app.js. Plain browser JavaScript (no build, no
// dependency); it never inserts server text as HTML (textContent only). One closure, kept in
// parts by job and joined here in order: each part uses names the ones before it define.
import { CHAT_EMBED_JS } from "./_page_js_chat_embed.ts";
import { DASHBOARD_JS } from "./_page_js_dashboard.ts";
import { SHARED_JS } from "./_page_js_shared.ts";

// Last: wires each tab's show handler and the key button, then lists the models.
const START_JS = String.raw`  onShow["tab-dashboard"] = pollDashboard;
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

export const PLAYGROUND_JS: string = SHARED_JS + CHAT_EMBED_JS + DASHBOARD_JS + START_JS;
