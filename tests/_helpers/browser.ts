// A real browser for the page tests: Debian's chromium driven by playwright-core, with a fresh
// profile each time. Where chromium is not installed, `CHROMIUM_MISSING` says why and the tests
// that need it are skipped (CI installs it: see .ci/run).
import fs from "node:fs";
import type { BrowserContext } from "playwright-core";

const EXECUTABLE = "/usr/bin/chromium";

/** Why browser tests cannot run here, or null when they can. */
export const CHROMIUM_MISSING: string | null = await Deno.stat(EXECUTABLE).then(
  () => null,
  () => `${EXECUTABLE} is not installed (apt-get install -y chromium); browser tests skipped`,
);
if (CHROMIUM_MISSING !== null) console.warn(CHROMIUM_MISSING);

// playwright-core probes /proc/sys/fs/binfmt_misc/WSLInterop with existsSync when it loads; under
// the test task's permissions (not --allow-all) Deno throws NotCapable there where Node answers
// false, so the probe answers false while the module loads.
async function importPlaywright(): Promise<typeof import("playwright-core")> {
  const existsSync = fs.existsSync;
  fs.existsSync = (path) => {
    try {
      return existsSync(path);
    } catch {
      return false;
    }
  };
  try {
    return await import("playwright-core");
  } finally {
    fs.existsSync = existsSync;
  }
}

/** A headless chromium with its own temporary profile; `close()` removes both. */
export async function launchBrowser(): Promise<
  { context: BrowserContext; close(): Promise<void> }
> {
  const profile = await Deno.makeTempDir({ prefix: "svc-chromium-" });
  // launchPersistentContext: playwright passes the profile as --user-data-dir itself.
  const { chromium } = await importPlaywright();
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: EXECUTABLE,
    headless: true,
    viewport: { width: 1280, height: 800 },
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  return {
    context,
    close: async () => {
      await context.close();
      await Deno.remove(profile, { recursive: true });
    },
  };
}
