/**
 * How a supervisor knows that the server answering on an engine's port is the process it started,
 * not another one that took the port first: it gives each child a random token in the
 * {@link ENGINE_INSTANCE_ENV} variable, and the engine's `/health` echoes it in the
 * {@link ENGINE_INSTANCE_HEADER} header. The token proves only identity (anyone can read it from
 * `/health`), so it is no secret.
 *
 * @module
 */

/** The variable a supervisor sets for the engine process it starts. */
export const ENGINE_INSTANCE_ENV = "SVC_ENGINE_INSTANCE";

/** The `/health` response header that carries the token back. */
export const ENGINE_INSTANCE_HEADER = "x-svc-engine-instance";
