/**
 * `svc llm keys create | list | revoke`: manages the gateway's API keys through its management
 * API (`/v1/management/keys`), with SVC_ADMIN_API_KEY. The gateway is `--url`, else the one
 * `svc llm serve` recorded, else `http://127.0.0.1:8000/v1`.
 *
 * @module
 */
import { loadConfig } from "../config/env.ts";
import { SvcPorts } from "../config/ports.ts";
import { ValidationError } from "../core/errors.ts";
import { trimBase } from "../client/detect_endpoints.ts";
import { formatTable } from "./_format.ts";
import { fetchOrThrow, readJson } from "./_http.ts";
import {
  checkHttpUrlOption,
  choiceOption,
  intOption,
  parseCommandArgs,
  type ParsedArgs,
} from "./args.ts";
import { defaultServeStatePath, readServeState } from "./serve_state.ts";

const COMMON =
  `  --url <base>       the gateway, ending in /v1 (http://host:port alone means its /v1;
                     default: the running 'svc llm serve', else
                     http://127.0.0.1:${SvcPorts.GATEWAY_DEFAULT}/v1)
  --json             print the JSON answer
Sends SVC_ADMIN_API_KEY as the admin key. Permissions: --allow-env --allow-read --allow-net.`;

/** Help text of `svc llm keys create`. */
export const LLM_KEYS_CREATE_HELP = `svc llm keys create — make an API key (shown once)

Usage: svc llm keys create --name <label> [--scope inference|admin] [--models a,b] [--rpm n]
       [--tpm n] [--url <base>] [--json]

  --name <label>     who or what the key is for
  --scope <s>        inference (default: the serving API) or admin (also the management API)
  --models <list>    models the key may use (comma-separated); others answer 404 model_not_found
  --rpm <n>, --tpm <n>
                     requests / tokens per minute (stored for the rate limiter)
${COMMON}`;

/** Help text of `svc llm keys list`. */
export const LLM_KEYS_LIST_HELP = `svc llm keys list — the gateway's API keys (no secrets)

Usage: svc llm keys list [--url <base>] [--json]

${COMMON}`;

/** Help text of `svc llm keys revoke`. */
export const LLM_KEYS_REVOKE_HELP = `svc llm keys revoke — revoke an API key by id

Usage: svc llm keys revoke <key_id> [--url <base>] [--json]

Every gateway replica refuses the key within about a second.
${COMMON}`;

const URL_OPTIONS = { url: { type: "string" }, json: { type: "boolean" } } as const;

/** Runs `svc llm keys create`. */
export async function llmKeysCreate(args: string[]): Promise<number> {
  const { values } = parseCommandArgs(args, "svc llm keys create", {
    ...URL_OPTIONS,
    name: { type: "string" },
    scope: { type: "string" },
    models: { type: "string" },
    rpm: { type: "string" },
    tpm: { type: "string" },
  });
  if (values.help) return help(LLM_KEYS_CREATE_HELP);
  const name = values.name as string | undefined;
  if (!name) {
    throw new ValidationError(
      "svc llm keys create needs --name <label> (who or what the key is for)",
      { param: "name" },
    );
  }
  const models = (values.models as string | undefined)?.split(",").map((m) => m.trim())
    .filter((m) => m !== "");
  if (models !== undefined && models.length === 0) {
    throw new ValidationError(
      `--models '${values.models}' names no model: give a comma-separated list ` +
        "(e.g. --models llama,qwen), or leave --models out for a key that may use every model",
      { param: "models" },
    );
  }
  const body = {
    name,
    scope: choiceOption(values, "scope", ["inference", "admin"]) ?? "inference",
    ...(models ? { models } : {}),
    rpm: intOption(values, "rpm", { min: 1, max: 1_000_000_000 }),
    tpm: intOption(values, "tpm", { min: 1, max: 1_000_000_000_000 }),
  };
  const key = await call(values, "POST", "/management/keys", body);
  if (body.scope === "inference" && await servesWithoutKey(values)) {
    console.error(
      "svc: warning: this gateway answers inference requests that carry no key, so this key " +
        "limits nothing yet; start it with SVC_ADMIN_API_KEY (or SVC_CHAT_API_KEY) set",
    );
  }
  if (values.json) console.log(JSON.stringify(key, null, 2));
  else {
    console.log(
      `svc: created ${key.id} (${key.scope}${
        models?.length ? `, models ${models.join(", ")}` : ""
      })`,
    );
    console.log(`svc: key ${key.key}`);
    console.log("svc: this is the only time the key is shown; store it now");
  }
  return 0;
}

/** Runs `svc llm keys list`. */
export async function llmKeysList(args: string[]): Promise<number> {
  const { values } = parseCommandArgs(args, "svc llm keys list", URL_OPTIONS);
  if (values.help) return help(LLM_KEYS_LIST_HELP);
  const list = await call(values, "GET", "/management/keys");
  if (values.json) {
    console.log(JSON.stringify(list, null, 2));
    return 0;
  }
  const rows = (list.data as Record<string, unknown>[]).map((k) => [
    String(k.id),
    String(k.name),
    String(k.scope),
    `${k.prefix}…`,
    (k.models as string[] | null)?.join(", ") ?? "all",
    k.revoked_at === null ? "active" : "revoked",
  ]);
  console.log(
    rows.length
      ? formatTable(["ID", "NAME", "SCOPE", "KEY", "MODELS", "STATE"], rows)
      : "svc: no keys yet; make one with 'svc llm keys create --name <label>'",
  );
  return 0;
}

/** Runs `svc llm keys revoke <id>`. */
export async function llmKeysRevoke(args: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(args, "svc llm keys revoke", URL_OPTIONS, true);
  if (values.help) return help(LLM_KEYS_REVOKE_HELP);
  if (positionals.length !== 1) {
    throw new ValidationError(
      "svc llm keys revoke takes one key id (key_…); 'svc llm keys list' shows them",
      { param: "id" },
    );
  }
  const key = await call(
    values,
    "DELETE",
    `/management/keys/${encodeURIComponent(positionals[0])}`,
  );
  if (values.json) console.log(JSON.stringify(key, null, 2));
  else console.log(`svc: revoked ${key.id} (${key.name})`);
  return 0;
}

function help(text: string): number {
  console.log(text);
  return 0;
}

async function call(
  values: ParsedArgs["values"],
  method: string,
  path: string,
  body?: unknown,
): Promise<Record<string, unknown>> {
  const base = await gatewayUrl(values.url as string | undefined);
  const key = loadConfig().adminApiKey;
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (key) headers.authorization = `Bearer ${key}`;
  const res = await fetchOrThrow(`${base}${path}`, {
    method,
    headers,
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  }, { what: "the gateway's management API", keyVariable: "SVC_ADMIN_API_KEY" });
  return await readJson<Record<string, unknown>>(res, "the gateway's management API");
}

// Whether the gateway lists its models to a request with no key (then it serves them too).
async function servesWithoutKey(values: ParsedArgs["values"]): Promise<boolean> {
  const base = await gatewayUrl(values.url as string | undefined);
  try {
    const res = await fetch(`${base}/models`, { signal: AbortSignal.timeout(5000) });
    await res.body?.cancel();
    return res.ok;
  } catch {
    return false;
  }
}

async function gatewayUrl(flag: string | undefined): Promise<string> {
  if (flag !== undefined) return checkedUrl(flag);
  const recorded = await readServeState(defaultServeStatePath()).catch(() => null);
  return recorded?.gatewayUrl ?? `http://127.0.0.1:${SvcPorts.GATEWAY_DEFAULT}/v1`;
}

// --url as the client library reads a base URL: http(s) only, a bare origin meaning its /v1.
function checkedUrl(flag: string): string {
  checkHttpUrlOption(
    "url",
    flag,
    `the gateway's http(s) base URL, e.g. http://127.0.0.1:${SvcPorts.GATEWAY_DEFAULT}/v1`,
  );
  return trimBase(flag);
}
