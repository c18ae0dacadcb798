// The admin checks with a fake TCP peer: every 127.x address is loopback, so a caller from
// another machine cannot be made with real sockets on a box with only loopback interfaces.
import { assertEquals, assertThrows } from "../_assert.ts";
import { AuthenticationError, PermissionDeniedError } from "../../src/core/errors.ts";
import { checkAdminRequest, GatewayKeys, isAdminPath } from "../../src/http/admin_guard.ts";

const peer = (hostname: string): Deno.NetAddr => ({ transport: "tcp", hostname, port: 40000 });
const req = (host = "127.0.0.1:8000") => new Request(`http://${host}/v1/management/engines`);

Deno.test("checkAdminRequest() refuses a non-loopback peer when there is no key", () => {
  for (const address of ["192.168.1.20", "10.0.0.7", "fe80::1", "::ffff:192.168.1.20"]) {
    const err = assertThrows(
      () => checkAdminRequest(req(), peer(address), { keyed: false }),
      PermissionDeniedError,
    );
    assertEquals(err.code, "not_loopback");
  }
  // With a key, the key decides (it was checked before this).
  checkAdminRequest(req(), peer("192.168.1.20"), { keyed: true });
});

Deno.test("checkAdminRequest() accepts loopback peers and in-process calls when there is no key", () => {
  for (const address of ["127.0.0.1", "127.3.2.1", "::1", "::ffff:127.0.0.1"]) {
    checkAdminRequest(req(), peer(address), { keyed: false });
  }
  checkAdminRequest(req("localhost:8000"), undefined, { keyed: false });
  checkAdminRequest(req("[::1]:8000"), peer("::1"), { keyed: false });
});

Deno.test("checkAdminRequest() refuses a loopback peer that addresses a foreign host name (DNS rebinding)", () => {
  const err = assertThrows(
    () => checkAdminRequest(req("attacker.example:8000"), peer("127.0.0.1"), { keyed: false }),
    PermissionDeniedError,
  );
  assertEquals(err.code, "not_loopback");
});

Deno.test("GatewayKeys: the admin key opens everything; the inference key never opens admin routes beside it", () => {
  const both = new GatewayKeys({ apiKey: "chat", adminApiKey: "admin" });
  both.checkInference("Bearer chat");
  both.checkInference("Bearer admin");
  both.checkAdmin("Bearer admin");
  const refused = assertThrows(() => both.checkAdmin("Bearer chat"), PermissionDeniedError);
  assertEquals(refused.code, "admin_key_required");
  for (const header of [null, "Bearer nope"]) {
    assertThrows(() => both.checkAdmin(header), AuthenticationError);
    assertThrows(() => both.checkInference(header), AuthenticationError);
  }
  // Without an admin key the inference key opens admin routes (loopback is checked elsewhere).
  const chatOnly = new GatewayKeys({ apiKey: "chat" });
  chatOnly.checkAdmin("Bearer chat");
  assertThrows(() => chatOnly.checkAdmin(null), AuthenticationError);
  // An admin key alone leaves inference open.
  const adminOnly = new GatewayKeys({ adminApiKey: "admin" });
  adminOnly.checkInference(null);
  assertThrows(() => adminOnly.checkAdmin("Bearer chat"), AuthenticationError);
  new GatewayKeys({}).checkAdmin(null);
});

Deno.test("isAdminPath() covers /v1/management and below only", () => {
  assertEquals(
    ["/v1/management", "/v1/management/dashboard", "/v1/managementx", "/v1/models"].map(
      isAdminPath,
    ),
    [true, true, false, false],
  );
});
