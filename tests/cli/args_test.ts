import { assertEquals, assertThrows } from "../_assert.ts";
import { ValidationError } from "../../src/core/errors.ts";
import { corsOriginsOption, floatOption } from "../../src/cli/args.ts";

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

Deno.test("floatOption() takes plain decimals only", () => {
  const read = (v: string) => floatOption({ t: v }, "t", { min: -2, max: 2 });
  assertEquals([read("0.7"), read("2"), read(".5"), read("-1.5")], [0.7, 2, 0.5, -1.5]);
  for (const bad of ["", "0x1", "1e0", "0b1", "Infinity", "3"]) {
    assertThrows(() => read(bad), ValidationError, "expected a decimal number from -2 to 2");
  }
});
