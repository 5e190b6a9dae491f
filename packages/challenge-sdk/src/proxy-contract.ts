/**
 * The contract between the master's proxy and a challenge, as code (docs/proxy-contract.md is
 * the prose): the headers the master sets, and the paths it never forwards from the public.
 */

/** Headers the master sets on what it forwards; a client can never send them through the proxy. */
export const PLATFORM_HEADERS = {
  /** `true` on every request the public proxy forwarded. */
  proxy: "x-platform-proxy",
  /** The challenge slug, on proxied, bridge, weights and internal requests. */
  challengeSlug: "x-platform-challenge-slug",
  /** The same slug under the name the anchor's challenges read. */
  coreChallengeSlug: "x-core-challenge-slug",
  /** The hotkey the master verified (bridge requests). */
  verifiedHotkey: "x-platform-verified-hotkey",
  /** The same hotkey, anchor spelling (bridge requests). */
  coreVerifiedHotkey: "x-core-verified-hotkey",
  /** The nonce of the signed request the master verified and reserved (bridge requests). */
  coreVerifiedNonce: "x-core-verified-nonce",
  /** sha256 hex of the canonical signed message (bridge requests). */
  coreRequestHash: "x-core-request-hash",
  /** The file name the miner gave an upload (bridge requests). */
  submissionFilename: "x-submission-filename",
} as const;

/** The two headers that may carry the challenge slug on internal requests. */
export const SLUG_HEADERS = [
  PLATFORM_HEADERS.challengeSlug,
  PLATFORM_HEADERS.coreChallengeSlug,
] as const;

/** First path segments the master's proxy refuses (403) together with everything below them. */
export const BLOCKED_PROXY_ROOTS: ReadonlySet<string> = new Set([
  "health",
  "version",
  "internal",
  "benchmark-executions",
  "benchmark_executions",
]);

const BENCHMARK_PARENTS: ReadonlySet<string> = new Set(["benchmark", "benchmarks"]);
const BENCHMARK_ACTIONS: ReadonlySet<string> = new Set(["run", "execute", "launch"]);

/**
 * True when the master's proxy would refuse a public request for `path` (a challenge path such
 * as `/v1/items/:id`): `/health`, `/version`, `/internal` and below, benchmark executions, and a
 * trailing run/execute/launch under `benchmark(s)`. Route parameters (`:id`) never match a rule.
 * @example isBlockedProxyPath("/internal/v1/get_weights") // true
 */
export function isBlockedProxyPath(path: string): boolean {
  const bare = path.split("?")[0] ?? "";
  const segments = bare
    .split("/")
    .filter((segment) => segment !== "")
    .map((segment) => (segment.startsWith(":") ? "" : segment.toLowerCase()));
  const [first] = segments;
  if (first === undefined) return false;
  if (BLOCKED_PROXY_ROOTS.has(first)) return true;
  if (segments.some((s) => s === "benchmark-executions" || s === "benchmark_executions")) {
    return true;
  }
  const last = segments[segments.length - 1]!;
  return BENCHMARK_ACTIONS.has(last) && segments.slice(0, -1).some((s) => BENCHMARK_PARENTS.has(s));
}

/** True for a path under `/internal` (where internal and bridge routes must live). */
export function isInternalPath(path: string): boolean {
  return path === "/internal" || path.startsWith("/internal/");
}

/**
 * True when the master's public proxy forwarded this request (`X-Platform-Proxy: true`). A
 * hint, not a credential: a client that talks to the challenge directly can send it too, so
 * never grant anything on it; internal routes check the bearer instead.
 */
export function isProxiedRequest(request: { headers: Headers }): boolean {
  return request.headers.get(PLATFORM_HEADERS.proxy)?.trim().toLowerCase() === "true";
}

/**
 * The path prefix a miner signs when it goes through the master (`/challenges/{slug}`): the
 * proxy strips it before forwarding, so signed routes also accept a signature over it.
 */
export function proxyPathPrefix(slug: string): string {
  return `/challenges/${slug}`;
}
