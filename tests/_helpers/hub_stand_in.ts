/**
 * A local stand-in for the model hub, for tests: a real `Deno.serve` server on 127.0.0.1 (port 0)
 * that serves model folders in the hub's URL layout, with the hub's headers and error codes, and
 * faults on demand (a connection cut mid-file, 5xx answers, a server that ignores `Range`).
 *
 * Routes (`{repo}` is `org/name`, `{rev}` a served revision name or the repo's commit sha):
 * - `GET /api/models/{repo}/revision/{rev}`: `{ id, sha, siblings: [{ rfilename, size, blobId, lfs? }] }`
 * - `GET|HEAD /{repo}/resolve/{rev}/{path}`: the file; `Range: bytes=N-` / `N-M` answer 206,
 *   past the end 416. LFS files (by `lfsPattern`) carry `X-Linked-Etag` (sha256) and
 *   `X-Linked-Size`, and with `redirectLfs` answer 302 to a `/_cdn/...` URL that needs no token.
 * - 401 without `Authorization: Bearer <token>` when `token` is set; 404 with `X-Error-Code`
 *   `RepoNotFound`, `RevisionNotFound` or `EntryNotFound`.
 *
 * @example
 * ```ts
 * import { startHubStandIn } from "./hub_stand_in.ts";
 * await using hub = startHubStandIn({ repos: { "demo/tiny": "/tmp/tiny-model" } });
 * const res = await fetch(`${hub.endpoint}/demo/tiny/resolve/main/config.json`);
 * console.log(res.status, hub.requests.length); // 200 1
 * ```
 *
 * @module
 */

import { createHash } from "node:crypto";
import { join, relative, sep } from "node:path";

/** A served repository. */
export interface HubStandInRepo {
  /** Folder whose files make up the repository. */
  folder: string;
  /** Commit sha the listing reports; default derived from the file names and sizes. */
  sha?: string;
  /** Branch or tag names served; default `["main"]`. The commit sha is always served. */
  revisions?: string[];
}

/** Faults, settable at start and later with `setFaults` (which resets their counters). */
export interface HubStandInFaults {
  /** Close the connection after this many body bytes of a file answer. */
  cutAfterBytes?: number;
  /** How many file answers are cut; default 1. */
  cutRequests?: number;
  /** Only cut this repository path (e.g. `onnx/model.onnx`); default any file. */
  cutPath?: string;
  /** Answer the next this-many requests (any route) with `failStatus`. */
  failRequests?: number;
  /** Status of failed requests; default 503. */
  failStatus?: number;
  /** Answer `Range` requests with 200 and the whole file, like a server without range support. */
  ignoreRange?: boolean;
}

/** Options of {@link startHubStandIn}. */
export interface HubStandInOptions extends HubStandInFaults {
  /** `"org/name"` → folder (or folder and options). */
  repos: Record<string, string | HubStandInRepo>;
  /** When set, every hub route needs `Authorization: Bearer <token>` (401 otherwise). */
  token?: string;
  /** LFS files answer 302 to a CDN-like `/_cdn/...` URL, as the hub does. */
  redirectLfs?: boolean;
  /** Paths stored "in LFS"; default `.onnx`, `.onnx_data*`, `.bin`, `.safetensors`. */
  lfsPattern?: RegExp;
  /** Body chunk size in bytes; default 64 KiB. */
  chunkSize?: number;
  /** Pause before each body chunk after the first, in ms (slow links, abort tests); default 0. */
  chunkDelayMs?: number;
}

/** One logged request. */
export interface HubStandInRequest {
  method: string;
  /** Decoded path, e.g. `/org/name/resolve/main/onnx/model.onnx`. */
  path: string;
  /** The `Range` header, if any. */
  range: string | null;
  /** The `Authorization` header, if any. */
  authorization: string | null;
  /** Status answered. */
  status: number;
}

/** A running stand-in. */
export interface HubStandIn {
  /** Base URL to use as the hub endpoint, e.g. `http://127.0.0.1:41234`. */
  readonly endpoint: string;
  /** Every request so far, in order. */
  readonly requests: HubStandInRequest[];
  /** Replaces the faults (and resets their counters). */
  setFaults(faults: HubStandInFaults): void;
  /** Current commit sha of a repository (what the listing reports). */
  commitOf(repo: string): Promise<string>;
  /** Stops the server and waits for open answers to finish. */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

interface FileInfo {
  size: number;
  sha256: string;
  gitSha1: string;
}

const DEFAULT_LFS = /\.(onnx|onnx_data(_\d+)?|bin|safetensors)$/;

/**
 * Starts a hub stand-in on 127.0.0.1, port 0.
 *
 * @example
 * ```ts
 * import { startHubStandIn } from "./hub_stand_in.ts";
 * const hub = startHubStandIn({ repos: { "demo/tiny": "/tmp/tiny" }, token: "secret" });
 * try { console.log(hub.endpoint); } finally { await hub.close(); }
 * ```
 */
export function startHubStandIn(options: HubStandInOptions): HubStandIn {
  const repos = new Map<string, HubStandInRepo>();
  for (const [id, repo] of Object.entries(options.repos)) {
    repos.set(id, typeof repo === "string" ? { folder: repo } : repo);
  }
  const lfsPattern = options.lfsPattern ?? DEFAULT_LFS;
  const chunkSize = options.chunkSize ?? 64 * 1024;
  const chunkDelayMs = options.chunkDelayMs ?? 0;
  const requests: HubStandInRequest[] = [];
  const hashes = new Map<string, FileInfo & { mtime: number }>();
  let faults: HubStandInFaults = { ...options };
  let cutsDone = 0;
  let failsDone = 0;

  const fileInfo = async (path: string): Promise<FileInfo> => {
    const stat = await Deno.stat(path);
    const mtime = stat.mtime?.getTime() ?? 0;
    const known = hashes.get(path);
    if (known && known.size === stat.size && known.mtime === mtime) return known;
    const sha256 = createHash("sha256");
    const sha1 = createHash("sha1").update(`blob ${stat.size}\0`);
    const file = await Deno.open(path, { read: true });
    for await (const chunk of file.readable) {
      sha256.update(chunk);
      sha1.update(chunk);
    }
    const info = {
      size: stat.size,
      mtime,
      sha256: sha256.digest("hex"),
      gitSha1: sha1.digest("hex"),
    };
    hashes.set(path, info);
    return info;
  };

  const listFiles = async (folder: string): Promise<string[]> => {
    const out: string[] = [];
    const walk = async (dir: string): Promise<void> => {
      for await (const e of Deno.readDir(dir)) {
        if (e.isDirectory) await walk(join(dir, e.name));
        else if (e.isFile) out.push(relative(folder, join(dir, e.name)).split(sep).join("/"));
      }
    };
    await walk(folder);
    return out.sort();
  };

  const commitOf = async (id: string): Promise<string> => {
    const repo = repos.get(id)!;
    if (repo.sha) return repo.sha;
    const hash = createHash("sha1").update(id);
    for (const f of await listFiles(repo.folder)) {
      hash.update(`\n${f}:${(await Deno.stat(join(repo.folder, f))).size}`);
    }
    return hash.digest("hex");
  };

  const notFound = (code: string, message: string): Response =>
    Response.json({ error: message }, { status: 404, headers: { "x-error-code": code } });

  /** Checks the repo and revision; answers an error Response or null when both are served. */
  const checkRepo = async (id: string, rev: string): Promise<Response | null> => {
    const repo = repos.get(id);
    if (!repo) return notFound("RepoNotFound", `Repository not found: ${id}`);
    const served = repo.revisions ?? ["main"];
    if (!served.includes(rev) && rev !== await commitOf(id)) {
      return notFound("RevisionNotFound", `Invalid rev id: ${rev}`);
    }
    return null;
  };

  const listing = async (id: string): Promise<Response> => {
    const repo = repos.get(id)!;
    const siblings = [];
    for (const rfilename of await listFiles(repo.folder)) {
      const info = await fileInfo(join(repo.folder, rfilename));
      siblings.push({
        rfilename,
        size: info.size,
        blobId: info.gitSha1,
        ...(lfsPattern.test(rfilename)
          ? { lfs: { sha256: info.sha256, size: info.size, pointerSize: 134 } }
          : {}),
      });
    }
    const sha = await commitOf(id);
    return Response.json({ _id: sha.slice(0, 24), id, modelId: id, sha, siblings });
  };

  const serveFile = async (
    req: Request,
    id: string,
    path: string,
    viaCdn: boolean,
  ): Promise<Response> => {
    const repo = repos.get(id)!;
    if (!(await listFiles(repo.folder)).includes(path)) {
      return notFound("EntryNotFound", `Entry not found: ${path}`);
    }
    const full = join(repo.folder, path);
    const info = await fileInfo(full);
    const lfs = lfsPattern.test(path);
    const headers = new Headers({
      "accept-ranges": "bytes",
      "content-type": "application/octet-stream",
      etag: `"${lfs ? info.sha256 : info.gitSha1}"`,
    });
    if (lfs) {
      headers.set("x-linked-etag", `"${info.sha256}"`);
      headers.set("x-linked-size", String(info.size));
      if (options.redirectLfs && !viaCdn) {
        const cdn = `/_cdn/${encodeURIComponent(id)}/${path}?expires=never`;
        headers.set("location", cdn);
        return new Response(null, { status: 302, headers });
      }
    }
    let start = 0;
    let end = info.size - 1;
    let status = 200;
    const range = /^bytes=(\d+)-(\d*)$/.exec(req.headers.get("range") ?? "");
    if (range && !faults.ignoreRange) {
      start = Number(range[1]);
      if (range[2] !== "") end = Math.min(end, Number(range[2]));
      if (start >= info.size || start > end) {
        headers.set("content-range", `bytes */${info.size}`);
        return new Response(null, { status: 416, headers });
      }
      status = 206;
      headers.set("content-range", `bytes ${start}-${end}/${info.size}`);
    }
    const length = end - start + 1;
    headers.set("content-length", String(length));
    if (req.method === "HEAD") return new Response(null, { status, headers });
    const cut = faults.cutAfterBytes !== undefined && cutsDone < (faults.cutRequests ?? 1) &&
      (faults.cutPath === undefined || faults.cutPath === path);
    if (cut) cutsDone++;
    const limit = cut ? Math.min(length, faults.cutAfterBytes!) : length;
    return new Response(fileStream(full, start, limit, chunkSize, chunkDelayMs), {
      status,
      headers,
    });
  };

  const route = async (req: Request, url: URL): Promise<Response> => {
    const path = decodeURIComponent(url.pathname);
    if (faults.failRequests !== undefined && failsDone < faults.failRequests) {
      failsDone++;
      return new Response("stand-in fault", { status: faults.failStatus ?? 503 });
    }
    if (req.method !== "GET" && req.method !== "HEAD") {
      return new Response("method not allowed", { status: 405 });
    }
    const cdn = /^\/_cdn\/([^/]+)\/(.+)$/.exec(url.pathname);
    if (cdn) {
      const id = decodeURIComponent(cdn[1]);
      if (!repos.has(id)) return notFound("RepoNotFound", `Repository not found: ${id}`);
      return await serveFile(req, id, decodeURIComponent(cdn[2]), true);
    }
    if (options.token && req.headers.get("authorization") !== `Bearer ${options.token}`) {
      return Response.json(
        { error: "Invalid credentials in Authorization header" },
        { status: 401, headers: { "x-error-code": "GatedRepo" } },
      );
    }
    const api = /^\/api\/models\/(.+?)\/revision\/([^/]+)$/.exec(url.pathname);
    if (api) {
      const id = decodeURIComponent(api[1]);
      const rev = decodeURIComponent(api[2]);
      return (await checkRepo(id, rev)) ?? await listing(id);
    }
    const resolve = /^\/(.+?)\/resolve\/([^/]+)\/(.+)$/.exec(url.pathname);
    if (resolve) {
      const id = decodeURIComponent(resolve[1]);
      const rev = decodeURIComponent(resolve[2]);
      const file = resolve[3].split("/").map(decodeURIComponent).join("/");
      return (await checkRepo(id, rev)) ?? await serveFile(req, id, file, false);
    }
    return notFound("RepoNotFound", `No route for ${path}`);
  };

  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const url = new URL(req.url);
    let res: Response;
    try {
      res = await route(req, url);
    } catch (err) {
      res = new Response(`stand-in error: ${err}`, { status: 500 });
    }
    requests.push({
      method: req.method,
      path: decodeURIComponent(url.pathname),
      range: req.headers.get("range"),
      authorization: req.headers.get("authorization"),
      status: res.status,
    });
    return res;
  });

  const close = async (): Promise<void> => {
    await server.shutdown();
  };
  return {
    endpoint: `http://127.0.0.1:${server.addr.port}`,
    requests,
    setFaults(next: HubStandInFaults): void {
      faults = { ...next };
      cutsDone = 0;
      failsDone = 0;
    },
    commitOf,
    close,
    [Symbol.asyncDispose]: close,
  };
}

/** Streams `limit` bytes of a file from `start`; ends early (a cut) when `limit` is short. */
function fileStream(
  path: string,
  start: number,
  limit: number,
  chunkSize: number,
  chunkDelayMs: number,
): ReadableStream<Uint8Array> {
  let file: Deno.FsFile | null = null;
  let sent = 0;
  const finish = (): void => {
    file?.close();
    file = null;
  };
  return new ReadableStream<Uint8Array>({
    async start() {
      file = await Deno.open(path, { read: true });
      await file.seek(start, Deno.SeekMode.Start);
    },
    async pull(controller) {
      if (sent > 0 && chunkDelayMs > 0) await new Promise((r) => setTimeout(r, chunkDelayMs));
      if (file === null) return; // cancelled while waiting
      const want = Math.min(chunkSize, limit - sent);
      const buf = new Uint8Array(want);
      const n = want > 0 ? await file!.read(buf) : null;
      if (n === null || n === 0) {
        // Closing the body before Content-Length is reached makes Deno drop the connection,
        // which is what a cut looks like to the client.
        finish();
        controller.close();
        return;
      }
      sent += n;
      controller.enqueue(buf.subarray(0, n));
    },
    cancel() {
      finish();
    },
  });
}
