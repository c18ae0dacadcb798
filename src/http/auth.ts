/**
 * Bearer-key authentication with a constant-time comparison.
 *
 * @module
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { AuthenticationError } from "../core/errors.ts";

/**
 * Checks `Authorization: Bearer <key>` against one configured key. Both sides are hashed first,
 * so the comparison takes the same time whatever the length or content of the offered key.
 *
 * @example
 * ```ts
 * import { BearerAuth } from "./auth.ts";
 * const auth = new BearerAuth("s3cret");
 * auth.verify("Bearer s3cret"); // passes
 * ```
 */
export class BearerAuth {
  #digest: Uint8Array;

  constructor(apiKey: string) {
    if (apiKey === "") throw new TypeError("the API key must not be empty");
    this.#digest = sha256(apiKey);
  }

  /** Returns normally when `authorization` carries the key; throws AuthenticationError if not. */
  verify(authorization: string | null): void {
    const match = authorization?.match(/^\s*bearer\s+(\S+)\s*$/i);
    if (!match) {
      throw new AuthenticationError(
        "You didn't provide an API key. Send it in the header 'Authorization: Bearer <key>'.",
        { code: "missing_api_key" },
      );
    }
    if (!timingSafeEqual(sha256(match[1]), this.#digest)) {
      throw new AuthenticationError(
        "Incorrect API key provided. Use the key the server was started with.",
        { code: "invalid_api_key" },
      );
    }
  }
}

function sha256(text: string): Uint8Array {
  return createHash("sha256").update(text, "utf8").digest();
}
