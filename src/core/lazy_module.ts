/**
 * The one way Svc loads a module that brings the ML runtime (transformers.js, onnxruntime) into a
 * program that may never run a model: the client's embedded mode, the `hf` embedding provider,
 * and `mod.ts` run as the CLI.
 *
 * Why not `import("./literal.ts")`: Deno and JSR read every literal specifier, dynamic ones too,
 * and fetch, install and type-check what they name before the program starts, even an import that
 * never runs (for the engine: ~500 MB of npm packages for an application that only calls a
 * server). A URL built at run time is invisible to that, so the caller names what it expects with
 * a type on its own side, and the loaded module checks that it fits with `satisfies` (or a test
 * does). tests/package/client_graph_test.ts holds the light entries to it. `deno publish` warns
 * once, here, that it cannot analyze this import: that is the point.
 *
 * @module
 */

/**
 * Imports the module at `url` (build it with `new URL("./path.ts", import.meta.url)`) typed as
 * `T`, the shape its caller relies on.
 *
 * @example
 * ```ts
 * import { importLazily } from "./lazy_module.ts";
 * const { sleep } = await importLazily<{ sleep: (ms: number) => Promise<void> }>(
 *   new URL("./sleep.ts", import.meta.url),
 * );
 * await sleep(1);
 * ```
 */
export function importLazily<T>(url: URL): Promise<T> {
  return import(url.href);
}
