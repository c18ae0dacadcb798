/**
 * The check that an id under `demo/` names a demo model: `demo/chatt` is a typo of `demo/chat`,
 * never a hub repository to download. Runtime-free (the CLI checks its flags with it before
 * anything starts).
 *
 * @module
 */
import { NotFoundError } from "../core/errors.ts";
import { closestMatch } from "../core/suggest.ts";
import { DEMO_MODEL_IDS, isDemoModelId } from "./generated_models/demo_models.ts";

/**
 * Throws a NotFoundError for an id under `demo/` that is no demo model (`demo/chatt`), with the
 * demo model it most likely meant: such an id is a typo, never a hub repository to download.
 * Call it after checking that no local folder has that name.
 *
 * @example
 * ```ts
 * import { unknownDemoModel } from "./demo_model_check.ts";
 * unknownDemoModel("demo/chat"); // fine
 * // unknownDemoModel("demo/chatt") throws: … did you mean 'demo/chat'?
 * ```
 */
export function unknownDemoModel(model: string): void {
  if (!model.startsWith("demo/") || isDemoModelId(model)) return;
  const meant = closestMatch(model, DEMO_MODEL_IDS);
  throw new NotFoundError(
    `'${model.slice(0, 200)}' is not a demo model` +
      (meant !== undefined ? `; did you mean '${meant}'?` : ".") +
      ` The demo models are ${DEMO_MODEL_IDS.join(", ")}.`,
    { code: "model_not_found", param: "model" },
  );
}
