// SVC_HOME of the engine child processes the gateway tests start: the demo models are generated
// once per machine under <home>/hub (generation is atomic, so parallel test files may race).
import { join } from "node:path";
import { tmpdir } from "node:os";

/** Home folder of test engine processes. */
export const CHILD_HOME: string = join(tmpdir(), "svc-test-home");
