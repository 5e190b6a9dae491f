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

// The block rule and the path reading it depends on live beside this file; re-exported so the
// contract reads as one module.
export { BLOCKED_PROXY_ROOTS, isBlockedProxyPath } from "./proxy-contract-path.js";

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
