import { isLoopbackHost, isLoopbackUrl } from "../../src/core/loopback.ts";
import { assert } from "../_assert.ts";

Deno.test("isLoopbackUrl() is true for localhost, 127.0.0.0/8 and ::1", () => {
  assert(isLoopbackUrl("http://localhost:1/v1"));
  assert(isLoopbackUrl("http://LOCALHOST/v1"));
  assert(isLoopbackUrl("http://api.localhost/v1"));
  assert(isLoopbackUrl("http://127.0.0.1:8001/v1"));
  assert(isLoopbackUrl("http://127.0.0.2/v1"));
  assert(isLoopbackUrl("http://127.1/v1")); // WHATWG URL writes it 127.0.0.1
  assert(isLoopbackUrl("http://[::1]:8000/v1"));
  assert(isLoopbackUrl("http://[::ffff:127.0.0.1]/v1")); // written [::ffff:7f00:1]
});

Deno.test("isLoopbackUrl() is false for other hosts, 0.0.0.0 and non-URLs", () => {
  assert(!isLoopbackUrl("http://10.0.0.1/v1"));
  assert(!isLoopbackUrl("https://api.openai.com/v1"));
  assert(!isLoopbackUrl("http://127.0.0.1.example.com/v1"));
  assert(!isLoopbackUrl("http://localhost.example.com/v1"));
  assert(!isLoopbackUrl("http://0.0.0.0:8000/v1"));
  assert(!isLoopbackUrl("http://[::ffff:10.0.0.1]/v1"));
  assert(!isLoopbackUrl("not a url"));
});

Deno.test("isLoopbackHost() reads peer addresses and bracketed IPv6 host names", () => {
  assert(isLoopbackHost("127.0.0.1"));
  assert(isLoopbackHost("::1"));
  assert(isLoopbackHost("[::1]"));
  assert(isLoopbackHost("::ffff:127.0.0.1"));
  assert(isLoopbackHost("::FFFF:7F00:1"));
  assert(!isLoopbackHost("::"));
  assert(!isLoopbackHost("192.168.1.2"));
  assert(!isLoopbackHost("0.0.0.0"));
});
