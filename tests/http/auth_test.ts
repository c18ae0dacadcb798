import { AuthenticationError } from "../../src/core/errors.ts";
import { BearerAuth } from "../../src/http/auth.ts";
import { assertEquals, assertThrows } from "../_assert.ts";

Deno.test("BearerAuth.verify() accepts the key in any scheme case and refuses the rest", () => {
  const auth = new BearerAuth("s3cret-key");
  auth.verify("Bearer s3cret-key");
  auth.verify("bearer s3cret-key ");
  for (
    const header of [
      null,
      "",
      "Bearer",
      "Bearer s3cret",
      "Bearer s3cret-key2",
      "Basic s3cret-key",
      "s3cret-key",
    ]
  ) {
    const err = assertThrows(() => auth.verify(header), AuthenticationError);
    assertEquals(err.status, 401);
  }
  assertEquals(
    assertThrows(() => auth.verify(null), AuthenticationError).code,
    "missing_api_key",
  );
  assertEquals(
    assertThrows(() => auth.verify("Bearer x"), AuthenticationError).code,
    "invalid_api_key",
  );
  assertThrows(() => new BearerAuth(""), TypeError);
});
