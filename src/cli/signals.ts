/**
 * Waiting for Ctrl-C or SIGTERM, so servers drain and stop instead of dying mid-request.
 *
 * @module
 */

/** Resolves on the first SIGINT or SIGTERM (listeners are removed afterwards). */
export function untilShutdownSignal(): Promise<Deno.Signal> {
  const signals: Deno.Signal[] = Deno.build.os === "windows" ? ["SIGINT"] : ["SIGINT", "SIGTERM"];
  return new Promise((resolve) => {
    const handlers = signals.map((signal) => {
      const handler = () => {
        handlers.forEach(([s, h]) => Deno.removeSignalListener(s, h));
        resolve(signal);
      };
      Deno.addSignalListener(signal, handler);
      return [signal, handler] as const;
    });
  });
}
