// A conformance corpus of real chat templates (./_templates/): each is rendered through our own
// path, renderChatTemplate on a real transformers.js tokenizer whose config carries the template
// and the model's bos/eos tokens, and compared with the exact text the template writes, as a
// published test gives it or as derived by hand from the template's logic.
import { join } from "node:path";
import { assert, assertEquals } from "../../_assert.ts";
import { demoFolder } from "../../_helpers/demo_engines.ts";
import { loadTokenizer } from "../../../src/engine/load_model.ts";
import { type PromptTokenizer, renderChatTemplate } from "../../../src/engine/chat/prompt.ts";
import { ValidationError } from "../../../src/core/errors.ts";
import { CORPUS } from "./_templates/corpus.ts";
import type { CorpusCase, CorpusTemplate } from "./_templates/types.ts";

type TokenizerClass = new (json: unknown, config: Record<string, unknown>) => PromptTokenizer;

let demo: Promise<{ Class: TokenizerClass; json: unknown; config: Record<string, unknown> }>;

/** demo/chat's tokenizer files and transformers.js class, read once. */
function demoTokenizer() {
  demo ??= (async () => {
    const folder = await demoFolder("demo/chat");
    const read = async (name: string) => JSON.parse(await Deno.readTextFile(join(folder, name)));
    const loaded = await loadTokenizer(folder, "cpu");
    return {
      Class: loaded.constructor as TokenizerClass,
      json: await read("tokenizer.json"),
      config: await read("tokenizer_config.json"),
    };
  })();
  return demo;
}

/** A transformers.js tokenizer as the model would load: its config's template and bos/eos. */
async function tokenizerFor(entry: CorpusTemplate): Promise<PromptTokenizer> {
  const { Class, json, config } = await demoTokenizer();
  return new Class(json, {
    ...config,
    chat_template: entry.template,
    bos_token: entry.bosToken,
    eos_token: entry.eosToken,
  });
}

/**
 * Runs `fn` as `strftime_now` would see it in Python at `iso`: `Date` stopped there, and month
 * names in English (Python's strftime runs in the C locale; @huggingface/jinja asks Intl for the
 * default locale's).
 */
function atClock<T>(iso: string, fn: () => T): T {
  const RealDate = Date;
  const RealFormat = Intl.DateTimeFormat;
  const at = new RealDate(iso).getTime();
  class StoppedDate extends RealDate {
    constructor(...args: [] | [string | number | Date]) {
      super(...(args.length === 0 ? [at] : args) as [number]);
    }
    static override now(): number {
      return at;
    }
  }
  globalThis.Date = StoppedDate as DateConstructor;
  // A function, not an arrow: the library calls it with `new`.
  Intl.DateTimeFormat = function (
    locales?: string | string[],
    options?: Intl.DateTimeFormatOptions,
  ) {
    return new RealFormat(locales ?? "en-US", options);
  } as typeof Intl.DateTimeFormat;
  try {
    return fn();
  } finally {
    globalThis.Date = RealDate;
    Intl.DateTimeFormat = RealFormat;
  }
}

function render(tokenizer: PromptTokenizer, entry: CorpusTemplate, c: CorpusCase): string {
  const run = () =>
    renderChatTemplate(tokenizer, c.messages, c.kwargs, entry.model, {
      tools: c.tools,
      addGenerationPrompt: c.addGenerationPrompt,
    });
  return c.now ? atClock(c.now, run) : run();
}

for (const [file, entry] of Object.entries(CORPUS)) {
  for (const c of entry.cases) {
    const divergence = c.divergence ? ` [known divergence: ${c.divergence}]` : "";
    Deno.test({
      name: `chat template corpus: ${entry.model} (${file}): ${c.name}${divergence}`,
      ignore: c.divergence !== undefined,
      fn: async () => {
        const tokenizer = await tokenizerFor(entry);
        if (c.rejects !== undefined) {
          let error: unknown;
          try {
            render(tokenizer, entry, c);
          } catch (err) {
            error = err;
          }
          assert(error instanceof ValidationError, `expected a refusal, got ${error}`);
          assert(error.message.includes(c.rejects), error.message);
          return;
        }
        assert(c.expected !== undefined, "a case needs `expected` or `rejects`");
        assertEquals(render(tokenizer, entry, c), c.expected);
      },
    });
  }
}

Deno.test("chat template corpus: every template file is in the corpus, and each case is sound", async () => {
  const folder = new URL("./_templates/", import.meta.url);
  const files: string[] = [];
  for await (const e of Deno.readDir(folder)) {
    if (e.isFile && e.name.endsWith(".ts") && !["corpus.ts", "types.ts"].includes(e.name)) {
      files.push(e.name);
    }
  }
  assertEquals(files.sort(), Object.keys(CORPUS).sort());
  for (const entry of Object.values(CORPUS)) {
    for (const c of entry.cases) {
      assert(
        (c.expected === undefined) !== (c.rejects === undefined),
        `${entry.model} / ${c.name}: give exactly one of expected, rejects`,
      );
    }
  }
});
