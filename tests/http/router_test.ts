import { Router } from "../../src/http/router.ts";
import { assertEquals } from "../_assert.ts";

Deno.test("Router.match() finds routes, params, 405 candidates and misses", () => {
  const router = new Router<string>();
  router.add("GET", "/v1/models", "list");
  router.add("GET", "/v1/models/:id*", "one");
  router.add("POST", "/v1/items/:id", "item");
  assertEquals(router.match("GET", "/v1/models/"), {
    kind: "found",
    match: { route: "list", params: {} },
  });
  assertEquals(router.match("HEAD", "/v1/models/a/b/c"), {
    kind: "found",
    match: { route: "one", params: { id: "a/b/c" } },
  });
  assertEquals(router.match("POST", "/v1/items/a%20b"), {
    kind: "found",
    match: { route: "item", params: { id: "a b" } },
  });
  assertEquals(router.match("POST", "/v1/models"), {
    kind: "method_not_allowed",
    allowed: ["GET", "HEAD"],
    routes: ["list"],
  });
  assertEquals(router.match("POST", "/v1/items/a/b").kind, "not_found");
  assertEquals(router.match("GET", "/v1").kind, "not_found");
  assertEquals(router.match("GET", "/v1/models/%zz").kind, "not_found");
  assertEquals(router.methodsFor("/v1/items/x"), ["POST"]);
});

Deno.test("Router.endpoints() lists each route once, parameters in braces", () => {
  const router = new Router<string>();
  router.add("GET", "/v1/models", "list");
  router.add("GET", "/v1/models/:id*", "one");
  router.add("DELETE", "/v1/responses/:id", "delete");
  router.add("GET", "/v1/models", "again");
  assertEquals(router.endpoints(), [
    "GET /v1/models",
    "GET /v1/models/{id}",
    "DELETE /v1/responses/{id}",
  ]);
});
