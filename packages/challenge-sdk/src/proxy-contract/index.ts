/**
 * @platform/challenge-sdk/proxy-contract: the contract between the master's public proxy and a
 * challenge, as code (docs/proxy-contract.md is the prose). The headers the master sets, and
 * how its proxy reads a path and which paths it never forwards. One implementation: the master's
 * proxy imports it, and `defineChallenge` uses it to refuse a route the proxy could never reach.
 * And the challenge's side of `X-Forwarded-For`: who the client is, trusting the header only
 * from a trusted proxy.
 */

export {
  clientKey,
  DEFAULT_TRUSTED_PROXIES,
  type TrustedProxies,
  trustedProxies,
} from "./client-address.js";
export {
  isInternalPath,
  isProxiedRequest,
  PLATFORM_HEADERS,
  proxyPathPrefix,
  SLUG_HEADERS,
} from "./proxy-contract.js";
export {
  BLOCKED_PROXY_ROOTS,
  isBlockedProxyPath,
  isBlockedProxySegments,
  plainProxySegment,
  proxySegmentKey,
  resolveProxyPath,
  splitProxyTarget,
} from "./proxy-contract-path.js";
