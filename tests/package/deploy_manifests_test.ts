// The example manifests under deploy/ (docker compose, Kubernetes, the Dockerfile), checked without
// docker or kubectl: every YAML file parses; the Kubernetes objects are well formed, of the
// expected kinds, and refer to each other correctly (selectors, Secret and ConfigMap keys, the
// headless Service's pod names in SVC_BACKENDS); gateways are probed on /health/ready; every Svc
// command line in them is one the CLI accepts (run with --help as a subprocess: the CLI's strict
// parser refuses an unknown flag); every environment variable set on a Svc container is one Svc
// reads, with a valid value.
import { join, relative } from "node:path";
import { parseAllDocuments } from "yaml";
import { assert, assertEquals } from "../_assert.ts";
import { ROOT, runCli } from "../cli/_run_cli.ts";
import { ENV_VARIABLES, findEnvVariable, parseEnvValue } from "../../src/config/env_vars.ts";
import { parseBackendList } from "../../src/gateway/backend_discovery.ts";

const DEPLOY = join(ROOT, "deploy");
const SVC_IMAGE = /^(svc:local|\$\{SVC_IMAGE:-svc:local\})$/;
const ENTRYPOINT = ["deno", "run", "-A", "cli.ts"];

// deno-lint-ignore no-explicit-any
type Obj = Record<string, any>;

interface YamlFile {
  path: string;
  docs: Obj[];
}

async function yamlFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for await (const e of Deno.readDir(dir)) {
    const path = join(dir, e.name);
    if (e.isDirectory) out.push(...await yamlFiles(path));
    else if (/\.ya?ml$/.test(e.name)) out.push(path);
  }
  return out.sort();
}

async function loadYaml(): Promise<YamlFile[]> {
  const files: YamlFile[] = [];
  for (const path of await yamlFiles(DEPLOY)) {
    const parsed = parseAllDocuments(await Deno.readTextFile(path), { merge: true });
    const docs = Array.isArray(parsed) ? parsed : [parsed];
    for (const doc of docs) {
      const problems = [...doc.errors, ...doc.warnings].map((e) => e.message);
      assertEquals(problems, [], `${relative(ROOT, path)} does not parse cleanly`);
    }
    files.push({
      path: relative(ROOT, path),
      docs: docs.map((d) => d.toJS({ maxAliasCount: 100 })).filter((d) => d !== null),
    });
  }
  return files;
}

const FILES = await loadYaml();
const KUBE = FILES.filter((f) => f.path.startsWith("deploy/kubernetes/")).flatMap((f) =>
  f.docs.map((doc) => ({ file: f.path, doc }))
);
const COMPOSE = FILES.find((f) => f.path === "deploy/docker-compose.yml")?.docs[0];

/** One Svc container's command line and environment, wherever it is declared. */
interface SvcContainer {
  where: string;
  /** The arguments after `svc` (the image's entrypoint is `deno run -A cli.ts`). */
  args: string[];
  /** Variable name -> literal value (undefined when it comes from a Secret or interpolation). */
  env: Map<string, string | undefined>;
}

function kubeObject(kind: string, name: string): Obj | undefined {
  return KUBE.find((k) => k.doc.kind === kind && k.doc.metadata?.name === name)?.doc;
}

function kubeSvcContainers(): SvcContainer[] {
  const out: SvcContainer[] = [];
  for (const { doc } of KUBE) {
    for (const c of doc.spec?.template?.spec?.containers ?? []) {
      if (!SVC_IMAGE.test(c.image)) continue;
      const where = `${doc.kind}/${doc.metadata.name} container ${c.name}`;
      const command: string[] = c.command ?? [];
      if (command.length > 0) assertEquals(command.slice(0, 4), ENTRYPOINT, where);
      const env = new Map<string, string | undefined>();
      for (const e of c.env ?? []) {
        if (e.valueFrom?.secretKeyRef) {
          const ref = e.valueFrom.secretKeyRef;
          const secret = kubeObject("Secret", ref.name);
          assert(secret, `${where}: Secret ${ref.name} is not in deploy/kubernetes`);
          assert(ref.key in (secret.stringData ?? secret.data ?? {}), `${where}: no ${ref.key}`);
        }
        env.set(e.name, e.value === undefined ? undefined : String(e.value));
      }
      for (const from of c.envFrom ?? []) {
        const ref = from.configMapRef ?? from.secretRef;
        const kind = from.configMapRef ? "ConfigMap" : "Secret";
        const source = kubeObject(kind, ref.name);
        assert(source, `${where}: ${kind} ${ref.name} is not in deploy/kubernetes`);
        for (const [k, v] of Object.entries(source.data ?? source.stringData ?? {})) {
          env.set(k, kind === "ConfigMap" ? String(v) : undefined);
        }
      }
      out.push({ where, args: [...command.slice(4), ...(c.args ?? [])].map(String), env });
    }
  }
  return out;
}

function composeSvcContainers(): SvcContainer[] {
  const out: SvcContainer[] = [];
  for (const [name, service] of Object.entries<Obj>(COMPOSE?.services ?? {})) {
    if (!SVC_IMAGE.test(service.image ?? "")) continue;
    const where = `compose service ${name}`;
    assert(Array.isArray(service.command), `${where}: write command as a list`);
    const raw: Obj | string[] = service.environment ?? {};
    const pairs: [string, unknown][] = Array.isArray(raw)
      ? raw.map((s) => [s.split("=")[0], s.includes("=") ? s.slice(s.indexOf("=") + 1) : ""])
      : Object.entries(raw);
    const env = new Map<string, string | undefined>();
    for (const [k, v] of pairs) env.set(k, String(v).includes("${") ? undefined : String(v));
    out.push({ where, args: service.command.map(String), env });
  }
  return out;
}

const CONTAINERS = [...kubeSvcContainers(), ...composeSvcContainers()];

Deno.test("every YAML file under deploy/ parses, and the expected files are there", () => {
  const paths = FILES.map((f) => f.path);
  assert(paths.includes("deploy/docker-compose.yml"), paths.join(", "));
  assert(paths.some((p) => p.startsWith("deploy/kubernetes/")), paths.join(", "));
  assert(FILES.every((f) => f.docs.length > 0), "an empty YAML file");
});

Deno.test("the Kubernetes objects are well formed and of the expected kinds", () => {
  const kinds = new Set<string>();
  for (const { file, doc } of KUBE) {
    const what = `${file}: ${JSON.stringify(doc).slice(0, 80)}`;
    assert(typeof doc.apiVersion === "string" && doc.apiVersion !== "", `${what}: apiVersion`);
    assert(typeof doc.kind === "string" && doc.kind !== "", `${what}: kind`);
    assert(typeof doc.metadata?.name === "string" && doc.metadata.name !== "", `${what}: name`);
    assert(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(doc.metadata.name), `${what}: DNS-1123 name`);
    const expected: Record<string, string> = {
      Namespace: "v1",
      Secret: "v1",
      ConfigMap: "v1",
      Service: "v1",
      Deployment: "apps/v1",
      StatefulSet: "apps/v1",
    };
    assertEquals(doc.apiVersion, expected[doc.kind], `${what}: unexpected kind or apiVersion`);
    kinds.add(doc.kind);
    const pods = doc.spec?.template;
    if (pods) {
      const labels = pods.metadata?.labels ?? {};
      for (const [k, v] of Object.entries(doc.spec.selector?.matchLabels ?? {})) {
        assertEquals(labels[k], v, `${what}: the selector does not match the pod labels`);
      }
      for (const c of pods.spec.containers) {
        for (const probe of [c.readinessProbe, c.livenessProbe, c.startupProbe]) {
          const port = probe?.httpGet?.port;
          if (typeof port === "string") {
            assert(c.ports?.some((p: Obj) => p.name === port), `${what}: no port named ${port}`);
          }
        }
      }
    }
  }
  for (const kind of ["Secret", "Service", "Deployment", "StatefulSet", "ConfigMap"]) {
    assert(kinds.has(kind), `no ${kind} in deploy/kubernetes`);
  }
});

Deno.test("the Kubernetes gateways are probed on /health/ready and fed by the engines' Service", () => {
  const gateways = KUBE.map((k) => k.doc).filter((d) =>
    d.kind === "Deployment" &&
    d.spec.template.spec.containers.some((c: Obj) =>
      c.args?.slice(0, 2).join(" ") === "llm gateway"
    )
  );
  assertEquals(gateways.length, 1, "one gateway Deployment");
  const gateway = gateways[0];
  const container = gateway.spec.template.spec.containers[0];
  assertEquals(container.readinessProbe?.httpGet?.path, "/health/ready");
  assert(gateway.spec.replicas >= 2, "several gateway replicas");
  const gatewayService = KUBE.map((k) => k.doc).find((d) =>
    d.kind === "Service" && d.spec.selector?.app === gateway.spec.template.metadata.labels.app
  );
  assert(gatewayService, "a Service in front of the gateways");

  // Engines: pods with stable names under a headless Service, listed in SVC_BACKENDS.
  const engines = KUBE.map((k) => k.doc).find((d) =>
    d.kind === "StatefulSet" &&
    d.spec.template.spec.containers[0].args?.join(" ").startsWith("llm run")
  );
  assert(engines, "an engine StatefulSet");
  const headless = kubeObject("Service", engines.spec.serviceName);
  assert(headless, `the engines' governing Service ${engines.spec.serviceName}`);
  assertEquals(headless.spec.clusterIP, "None", "the engines' Service is headless");
  assertEquals(headless.spec.selector.app, engines.spec.template.metadata.labels.app);
  const engineArgs: string[] = engines.spec.template.spec.containers[0].args;
  const enginePort = engineArgs[engineArgs.indexOf("--port") + 1];
  const gw = CONTAINERS.find((c) => c.where.startsWith(`Deployment/${gateway.metadata.name}`))!;
  const backends = parseBackendList(gw.env.get("SVC_BACKENDS") ?? "");
  assertEquals(backends.length, engines.spec.replicas, "one backend per engine pod");
  backends.forEach((url, i) => {
    assertEquals(
      url,
      `http://${engines.metadata.name}-${i}.${headless.metadata.name}:${enginePort}/v1`,
    );
  });
  for (const name of ["SVC_ADMIN_API_KEY", "SVC_STATE_URL"]) {
    assert(
      container.env.some((e: Obj) => e.name === name && e.valueFrom?.secretKeyRef),
      `${name} comes from a Secret`,
    );
  }
});

Deno.test("the compose file runs postgres, redis, two engines and two gateways behind a balancer", () => {
  assert(COMPOSE, "deploy/docker-compose.yml");
  const services: Record<string, Obj> = COMPOSE.services;
  const engines = Object.entries(services).filter(([, s]) =>
    s.command?.slice(0, 2).join(" ") === "llm run"
  );
  const gateways = Object.entries(services).filter(([, s]) =>
    s.command?.slice(0, 2).join(" ") === "llm gateway"
  );
  assert(engines.length >= 2 && gateways.length >= 2, "two engines and two gateways");
  assert(services.postgres && services.redis, "postgres and redis services");
  const engineUrls = engines.map(([name, s]) =>
    `http://${name}:${s.command[s.command.indexOf("--port") + 1]}/v1`
  );
  for (const [name, s] of gateways) {
    const backends = s.command.flatMap((a: string, i: number) =>
      a === "--backend" ? [s.command[i + 1]] : []
    );
    assertEquals(backends.sort(), [...engineUrls].sort(), `${name}'s --backend list`);
    assert(String(s.environment.SVC_STATE_URL).includes("@postgres:"), `${name}: SVC_STATE_URL`);
    assertEquals(s.environment.SVC_COORD_URL, "redis://redis:6379", `${name}: SVC_COORD_URL`);
    assert(JSON.stringify(s.healthcheck.test).includes("/health/ready"), `${name}: healthcheck`);
  }
  const balancer = JSON.stringify(COMPOSE.configs ?? {});
  assert(balancer.includes("/health/ready"), "the balancer checks /health/ready");
  for (const [name] of gateways) assert(balancer.includes(`${name}:8000`), `balancer -> ${name}`);
});

Deno.test("the Dockerfile's entrypoint is `deno run -A cli.ts` and its CMD is a valid command", async () => {
  const text = await Deno.readTextFile(join(DEPLOY, "Dockerfile"));
  const json = (instruction: string) =>
    JSON.parse(text.match(new RegExp(`^${instruction} (\\[.*\\])$`, "m"))![1]);
  assertEquals(json("ENTRYPOINT"), ENTRYPOINT);
  assert(/^RUN deno install\b/m.test(text), "the image runs deno install");
  const cmd: string[] = json("CMD");
  const { code } = await cliHelp(cmd.filter((a) => a !== "--help"));
  assertEquals(code, 0);
});

// `svc <path> --help`, once per command path and set of arguments.
const helps = new Map<string, Promise<{ code: number; text: string }>>();
function cliHelp(args: string[]): Promise<{ code: number; text: string }> {
  const key = JSON.stringify(args);
  let found = helps.get(key);
  if (!found) {
    found = (async () => {
      const home = await Deno.makeTempDir({ prefix: "svc_deploy_" });
      try {
        const r = await runCli([...args, "--help"], {
          perms: ["--allow-read", "--allow-env", "--allow-sys", "--allow-ffi"],
          home,
        });
        return { code: r.code, text: r.stdout + r.stderr };
      } finally {
        await Deno.remove(home, { recursive: true });
      }
    })();
    helps.set(key, found);
  }
  return found;
}

Deno.test("every Svc command line in deploy/ uses subcommands and flags the CLI accepts", async () => {
  assert(CONTAINERS.length >= 6, `only ${CONTAINERS.length} Svc containers found`);
  for (const c of CONTAINERS) {
    const path = c.args.slice(0, c.args.findIndex((a) => a.startsWith("-")));
    assert(path.length >= 2, `${c.where}: no subcommand in ${c.args.join(" ")}`);
    // The subcommand's own help (an unknown one prints the general help instead).
    const help = await cliHelp(path);
    assertEquals(help.code, 0, `${c.where}: svc ${path.join(" ")} --help: ${help.text}`);
    assert(
      help.text.startsWith(`svc ${path.join(" ")} —`),
      `${c.where}: 'svc ${path.join(" ")}' is not a command`,
    );
    const documented = new Set(help.text.match(/--[a-z][a-z0-9-]*/g));
    for (const flag of c.args.filter((a) => a.startsWith("--"))) {
      const name = flag.split("=")[0];
      assert(documented.has(name), `${c.where}: svc ${path.join(" ")} has no ${name}`);
    }
    // The whole line through the CLI's strict parser (unknown options exit 65).
    const whole = await cliHelp(c.args);
    assertEquals(whole.code, 0, `${c.where}: svc ${c.args.join(" ")}: ${whole.text}`);
  }
});

Deno.test("every environment variable set on a Svc container is one Svc reads, validly", () => {
  const known = new Set(ENV_VARIABLES.map((v) => v.name));
  for (const c of CONTAINERS) {
    for (const [name, value] of c.env) {
      assert(known.has(name), `${c.where}: Svc reads no ${name} (see src/config/env_vars.ts)`);
      if (value === undefined) continue;
      parseEnvValue(findEnvVariable(name)!, value, c.where);
      if (name === "SVC_BACKENDS") {
        for (const url of parseBackendList(value)) assert(/^https?:\/\/.+\/v1$/.test(url), url);
      }
      if (name === "SVC_COORD_URL") assert(value.startsWith("redis://"), `${c.where}: ${value}`);
    }
  }
  const gateways = CONTAINERS.filter((c) => c.args.slice(0, 2).join(" ") === "llm gateway");
  for (const g of gateways) {
    for (const name of ["SVC_ADMIN_API_KEY", "SVC_STATE_URL", "SVC_COORD_URL", "ENGINE_API_KEY"]) {
      assert(g.env.has(name), `${g.where} sets no ${name}`);
    }
  }
  const engines = CONTAINERS.filter((c) => c.args.slice(0, 2).join(" ") === "llm run");
  for (const e of engines) assert(e.env.has("ENGINE_API_KEY"), `${e.where} sets no ENGINE_API_KEY`);
});
