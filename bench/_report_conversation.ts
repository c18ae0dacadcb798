/**
 * The conversation part of `bench/RESULTS.md`: time to first token turn by turn and user by user,
 * ours (prefix cache) beside llama.cpp (its prompt cache), and the issue's two targets.
 *
 * @module
 */

import { fmt, median, ratio } from "./_stats.ts";
import { ANSWER_TOKENS, type ConversationResults, SYSTEM_WORDS, TURNS } from "./conversation.ts";
import type { TargetStatus } from "./_report.ts";

/** Turn 8 at or below llama.cpp; users 2..8 at most half of llama.cpp's. */
export function conversationTargets(c: ConversationResults): TargetStatus[] {
  const ours = c.conversation.ours;
  const llama = c.conversation.llama;
  if (!ours || !llama) return [];
  const last = TURNS - 1;
  const usersOurs = laterUsers(c.shared.ours!.ttftMs);
  const usersLlama = laterUsers(c.shared.llama!.ttftMs);
  return [
    {
      name: `Conversation, turn ${TURNS}: TTFT ours vs llama.cpp (${c.llama!.type})`,
      measured: `${fmt(ours.ttftMs[last], 0)} / ${fmt(llama.ttftMs[last], 0)} ms = ${
        ratio(ours.ttftMs[last], llama.ttftMs[last])
      }`,
      required: "≤ 1x",
      met: ours.ttftMs[last] <= llama.ttftMs[last],
    },
    {
      name: `Shared system prompt, users 2..${TURNS}: median TTFT ours vs llama.cpp`,
      measured: `${fmt(usersOurs, 0)} / ${fmt(usersLlama, 0)} ms = ${ratio(usersOurs, usersLlama)}`,
      required: "≤ 0.5x",
      met: usersOurs <= usersLlama / 2,
    },
  ];
}

/** The section's Markdown. */
export function conversationSection(c: ConversationResults): string[] {
  const servers = (["ours", "llama"] as const).filter((s) => c.conversation[s]);
  const name = { ours: "ours", llama: "llama.cpp" };
  const table = (what: string, series: ConversationResults["conversation"]) => [
    `| ${what} | ${servers.map((s) => `${name[s]} TTFT ms`).join(" | ")} | ${
      c.conversation.llama ? "ours / llama.cpp | " : ""
    }prompt tokens | cached tokens ${servers.map((s) => name[s]).join(" / ")} |`,
    `| ---: | ${servers.map(() => "---:").join(" | ")} | ${
      c.conversation.llama ? "---: | " : ""
    }---: | ---: |`,
    ...series.ours!.ttftMs.map((_, i) =>
      `| ${i + 1} | ${servers.map((s) => fmt(series[s]!.ttftMs[i], 0)).join(" | ")} | ${
        series.llama ? `${ratio(series.ours!.ttftMs[i], series.llama.ttftMs[i])} | ` : ""
      }${fmt(series.ours!.promptTokens[i], 0)} | ${
        servers.map((s) => fmt(series[s]!.cachedTokens[i], 0)).join(" / ")
      } |`
    ),
  ];
  return [
    "## Conversations (prefix cache)",
    "",
    `A system prompt of ~${SYSTEM_WORDS} words, then (1) one user's ${TURNS}-turn conversation ` +
    `sent whole each turn with the server's own earlier answers, and (2) ${TURNS} users one ` +
    `after another, each the same system prompt and a question of their own. ${ANSWER_TOKENS} ` +
    `tokens per answer, greedy; medians of ${c.repeats} repeats (a system prompt of its own ` +
    "each), the servers taking turns. Ours: the prefix cache at its default; cached tokens are " +
    "`usage.prompt_tokens_details.cached_tokens`." +
    (c.llama
      ? ` llama.cpp: \`llama-server\` on GGUF ${c.llama.type}, \`-np ${c.llama.slots}\`, ` +
        "`cache_prompt: true` (its default); cached tokens are its `timings.cache_n`."
      : " llama.cpp: not measured in this run (no llama-server build)."),
    "",
    ...table("turn", c.conversation),
    "",
    ...table("user", c.shared),
    "",
  ];
}

function laterUsers(ttfts: number[]): number {
  return median(ttfts.slice(1));
}
