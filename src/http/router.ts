/**
 * A tiny path router: exact segments, `:name` for one segment and `:name*` for the rest of the
 * path (model ids such as `demo/chat` contain slashes).
 *
 * @module
 */

/** What a route match gives: the route and its decoded path parameters. */
export interface RouteMatch<R> {
  route: R;
  params: Record<string, string>;
}

/** The result of {@link Router.match}. */
export type MatchResult<R> =
  | { kind: "found"; match: RouteMatch<R> }
  | { kind: "method_not_allowed"; allowed: string[]; routes: R[] }
  | { kind: "not_found" };

interface Compiled<R> {
  route: R;
  method: string;
  segments: string[];
}

/**
 * Matches requests to routes by method and path template.
 *
 * @example
 * ```ts
 * import { Router } from "./router.ts";
 * const router = new Router<string>();
 * router.add("GET", "/v1/models/:id*", "model");
 * router.match("GET", "/v1/models/demo/chat"); // found, params.id = "demo/chat"
 * ```
 */
export class Router<R> {
  #routes: Compiled<R>[] = [];

  /** Adds a route; earlier routes win. */
  add(method: string, path: string, route: R): void {
    this.#routes.push({ route, method: method.toUpperCase(), segments: split(path) });
  }

  /**
   * Every route (or those `listed` keeps) as `METHOD /path` (`{name}` for a parameter), in the
   * order added, once each.
   */
  endpoints(listed: (route: R) => boolean = () => true): string[] {
    const shown = this.#routes.filter((r) => listed(r.route)).map((r) => {
      const path = r.segments.map((s) =>
        s.startsWith(":") ? `{${s.slice(1).replace(/\*$/, "")}}` : s
      );
      return `${r.method} /${path.join("/")}`;
    });
    return [...new Set(shown)];
  }

  /** Methods (with HEAD for GET) that some route accepts on `path`. */
  methodsFor(path: string): string[] {
    const parts = split(path);
    const methods = new Set<string>();
    for (const r of this.#routes) {
      if (matchSegments(r.segments, parts) !== undefined) {
        methods.add(r.method);
        if (r.method === "GET") methods.add("HEAD");
      }
    }
    return [...methods];
  }

  /** Finds the route for `method` and `path` (HEAD matches GET routes). */
  match(method: string, path: string): MatchResult<R> {
    const parts = split(path);
    const wanted = method.toUpperCase() === "HEAD" ? "GET" : method.toUpperCase();
    const allowed = new Set<string>();
    const onPath: R[] = [];
    for (const r of this.#routes) {
      const params = matchSegments(r.segments, parts);
      if (params === undefined) continue;
      if (r.method === wanted) return { kind: "found", match: { route: r.route, params } };
      allowed.add(r.method);
      if (r.method === "GET") allowed.add("HEAD");
      onPath.push(r.route);
    }
    return allowed.size > 0
      ? { kind: "method_not_allowed", allowed: [...allowed], routes: onPath }
      : { kind: "not_found" };
  }
}

function split(path: string): string[] {
  return path.split("/").filter((s) => s !== "");
}

function matchSegments(
  template: readonly string[],
  parts: readonly string[],
): Record<string, string> | undefined {
  const params: Record<string, string> = {};
  for (let i = 0; i < template.length; i++) {
    const t = template[i];
    if (t.startsWith(":") && t.endsWith("*")) {
      if (i >= parts.length) return undefined;
      const rest = decode(parts.slice(i).join("/"));
      if (rest === undefined) return undefined;
      params[t.slice(1, -1)] = rest;
      return params;
    }
    if (i >= parts.length) return undefined;
    if (t.startsWith(":")) {
      const value = decode(parts[i]);
      if (value === undefined) return undefined;
      params[t.slice(1)] = value;
    } else if (t !== parts[i]) {
      return undefined;
    }
  }
  return template.length === parts.length ? params : undefined;
}

function decode(s: string): string | undefined {
  try {
    return decodeURIComponent(s);
  } catch {
    return undefined; // malformed %-escape: no route matches
  }
}
