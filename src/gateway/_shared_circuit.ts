/**
 * Circuit breakers shared by gateway replicas (through the coordinator): a circuit one replica
 * opens is opened on the others when they next use that backend (each replica reads a backend's
 * shared state at most every {@link READ_EVERY_MS}), and once the cool-down is over only one
 * replica sends the half-open probe. Without this, each replica pays its own failures before its
 * breaker opens, and every replica probes a recovering backend at once.
 *
 * @module
 */

import { type Coordinator, isCoordinationUnavailable } from "../coord/coordinator.ts";
import type { Backend } from "./backend.ts";

/** How often a replica reads one backend's shared circuit state, at most. */
export const READ_EVERY_MS = 250;

/** The shared side of the backends' circuit breakers. */
export class SharedCircuits {
  #coordinator: Coordinator;
  #readAt = new Map<string, number>();

  constructor(coordinator: Coordinator) {
    this.#coordinator = coordinator;
  }

  /**
   * Before an attempt on `backend`: applies a circuit another replica opened, and claims the
   * half-open probe. False when the attempt must not be sent (open elsewhere, or another
   * replica sends the probe).
   */
  async mayAttempt(backend: Backend): Promise<boolean> {
    if (this.#coordinator.unavailable() !== null) return true;
    try {
      return await this.#mayAttempt(backend);
    } catch (err) {
      if (isCoordinationUnavailable(err)) return true;
      throw err;
    }
  }

  async #mayAttempt(backend: Backend): Promise<boolean> {
    const circuit = backend.circuit;
    if (circuit.state === "half_open") {
      return await this.#coordinator.claim(probeName(backend), Math.max(1, circuit.cooldownMs));
    }
    const now = Date.now();
    if (now - (this.#readAt.get(backend.id) ?? -Infinity) < READ_EVERY_MS) return true;
    this.#readAt.set(backend.id, now);
    const openUntil = Number(await this.#coordinator.get(openName(backend)));
    if (!(openUntil > now)) return true;
    circuit.openFor(openUntil - now);
    return false;
  }

  /** After an attempt: publishes a circuit it opened; a probe that closed it frees the claim. */
  async afterAttempt(backend: Backend, opensBefore: number, stateBefore: string): Promise<void> {
    const circuit = backend.circuit;
    if (circuit.opens > opensBefore && circuit.state === "open") {
      const remaining = circuit.remainingCooldownMs;
      await this.#coordinator.put(openName(backend), String(Date.now() + remaining), remaining);
    } else if (stateBefore === "half_open" && circuit.state === "closed") {
      await this.#coordinator.put(openName(backend), "0", 1);
      await this.#coordinator.release(probeName(backend));
    }
  }
}

const openName = (backend: Backend) => `circuit-open:${backend.id}`;
const probeName = (backend: Backend) => `circuit-probe:${backend.id}`;
