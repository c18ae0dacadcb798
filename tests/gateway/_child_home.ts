// SVC_HOME of the engine child processes the gateway tests start: the demo models are generated
// once per machine under <home>/hub (generation is atomic, so parallel test files may race).
import { join } from "node:path";
import { tmpdir } from "node:os";

/** Home folder of test engine processes. */
export const CHILD_HOME: string = join(tmpdir(), "svc-test-home");

/**
 * Links `<home>/hub` to the shared demo models, so nothing is generated again. The shared folder
 * is made first: a link to a folder no test has made yet would make the child's `mkdir` fail.
 */
export async function linkSharedHub(home: string): Promise<void> {
  await Deno.mkdir(join(CHILD_HOME, "hub"), { recursive: true });
  await Deno.symlink(join(CHILD_HOME, "hub"), join(home, "hub"));
}
