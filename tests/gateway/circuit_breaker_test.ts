import { assert, assertEquals } from "../_assert.ts";
import { CircuitBreaker, type CircuitState } from "../../src/gateway/circuit_breaker.ts";

function fakeClock(): { now: () => number; advance: (ms: number) => void } {
  let t = 1000;
  return { now: () => t, advance: (ms) => (t += ms) };
}

Deno.test("CircuitBreaker opens after N consecutive failures, not before", () => {
  const clock = fakeClock();
  const b = new CircuitBreaker({ failureThreshold: 3, cooldownMs: 100, now: clock.now });
  b.recordFailure();
  b.recordFailure();
  b.recordSuccess(); // resets the count
  b.recordFailure();
  b.recordFailure();
  assertEquals(b.state, "closed");
  assert(b.tryAcquire());
  b.recordFailure();
  assertEquals(b.state, "open");
  assertEquals(b.tryAcquire(), false);
  assertEquals(b.isAvailable(), false);
  assertEquals(b.remainingCooldownMs, 100);
});

Deno.test("CircuitBreaker half-opens after the cool-down and lets one probe through", () => {
  const clock = fakeClock();
  const changes: CircuitState[] = [];
  const b = new CircuitBreaker({
    failureThreshold: 1,
    cooldownMs: 100,
    now: clock.now,
    onStateChange: (s) => changes.push(s),
  });
  b.recordFailure();
  clock.advance(99);
  assertEquals(b.state, "open");
  clock.advance(1);
  assertEquals(b.state, "half_open");
  assert(b.isAvailable());
  assert(b.tryAcquire(), "the probe goes through");
  assertEquals(b.tryAcquire(), false, "a second request waits for the probe's outcome");
  assertEquals(b.isAvailable(), false);
  b.recordSuccess();
  assertEquals(b.state, "closed");
  assertEquals(changes, ["open", "half_open", "closed"]);
});

Deno.test("CircuitBreaker re-opens when the half-open probe fails", () => {
  const clock = fakeClock();
  const b = new CircuitBreaker({ failureThreshold: 2, cooldownMs: 50, now: clock.now });
  b.recordFailure();
  b.recordFailure();
  clock.advance(50);
  assert(b.tryAcquire());
  b.recordFailure();
  assertEquals(b.state, "open");
  assertEquals(b.opens, 2);
  clock.advance(49);
  assertEquals(b.tryAcquire(), false, "a new cool-down started at the failed probe");
  clock.advance(1);
  assert(b.tryAcquire());
});

Deno.test("CircuitBreaker ignores a late success while open, and frees a cancelled probe", () => {
  const clock = fakeClock();
  const b = new CircuitBreaker({ failureThreshold: 1, cooldownMs: 50, now: clock.now });
  b.recordFailure();
  b.recordSuccess(); // a request sent before it opened
  assertEquals(b.state, "open");
  clock.advance(50);
  assert(b.tryAcquire());
  b.recordNeutral(); // the probe's client went away
  assert(b.tryAcquire(), "another probe may go");
});
