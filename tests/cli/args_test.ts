import { assertEquals, assertThrows } from "../_assert.ts";
import { ValidationError } from "../../src/core/errors.ts";
import { corsOriginsOption } from "../../src/cli/args.ts";

Deno.test("corsOriginsOption() reads '*', 'none' and a list of origins", () => {
  assertEquals(corsOriginsOption({}, "cors-origins"), undefined);
  assertEquals(corsOriginsOption({ "cors-origins": "*" }, "cors-origins"), "*");
  assertEquals(corsOriginsOption({ "cors-origins": "none" }, "cors-origins"), []);
  assertEquals(
    corsOriginsOption(
      { "cors-origins": "http://localhost:3000, https://app.example" },
      "cors-origins",
    ),
    ["http://localhost:3000", "https://app.example"],
  );
});

Deno.test("corsOriginsOption() names the flag and the bad entry when one is not an origin", () => {
  for (const bad of ["localhost:3000", "http://a.example/path", "https://a.example/", ""]) {
    const err = assertThrows(
      () => corsOriginsOption({ "cors-origins": bad }, "cors-origins"),
      ValidationError,
      "--cors-origins",
    );
    assertEquals(err.param, "cors-origins");
  }
});
