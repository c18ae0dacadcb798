// A real redis-server (Debian's `redis-server`) on a free loopback port, for the coordination
// tests; null when the binary is missing (those tests are then ignored, saying why).
import { freePort } from "./free_port.ts";

/** A running Redis. */
export interface RedisServer {
  url: string;
  /** Its port (a later {@link startRedis} on it brings "the same" Redis back, empty). */
  port: number;
  stop(): Promise<void>;
  /** Freezes the process (SIGSTOP): connections stay open but nothing answers. */
  pause(): void;
  /** Lets a paused process go on (SIGCONT). */
  resume(): void;
}

/** The redis-server binary, or null. */
export function findRedisServer(): string | null {
  for (const dir of (Deno.env.get("PATH") ?? "").split(":").concat("/usr/bin", "/usr/sbin")) {
    try {
      if (Deno.statSync(`${dir}/redis-server`).isFile) return `${dir}/redis-server`;
    } catch { /* not here */ }
  }
  return null;
}

/** Starts a Redis that keeps nothing on disk. */
export async function startRedis(binary: string, port = freePort()): Promise<RedisServer> {
  const child = new Deno.Command(binary, {
    args: ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
    stdout: "null",
    stderr: "null",
  }).spawn();
  const deadline = Date.now() + 10_000;
  while (true) {
    try {
      (await Deno.connect({ hostname: "127.0.0.1", port })).close();
      break;
    } catch (err) {
      if (Date.now() > deadline) throw new Error(`redis-server did not listen on ${port}: ${err}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    stop: async () => {
      child.kill("SIGKILL");
      await child.status;
    },
    pause: () => child.kill("SIGSTOP"),
    resume: () => child.kill("SIGCONT"),
  };
}
