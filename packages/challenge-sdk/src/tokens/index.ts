/**
 * @platform/challenge-sdk/tokens: the credentials a challenge issues to its own workers and
 * tools, and how it checks them. Capability tokens (`<id>.<mac>`, an HMAC of a scope, an id and an
 * optional expiry: no token table, only the hash stored, revoked by deleting it) are what the
 * agent-eval challenge gives its review and eval workers; random tokens (`issueToken`, looked up
 * by their hash) suit a credential with nothing to name. A route's `bearer` check receives the
 * presented token already read from `Authorization: Bearer`; `bearerToken` is for code outside a
 * route (a proxy, a sidecar).
 */
export {
  bearerToken,
  CAPABILITY_ID_PATTERN,
  type CapabilityCheck,
  type CapabilityClaim,
  type CapabilityTokenSpec,
  type CapabilityVerdict,
  type IssuedCapabilityToken,
  type IssuedToken,
  issueCapabilityToken,
  issueToken,
  readCapabilityToken,
  secretsEqual,
  tokenMatchesHash,
  verifyCapabilityToken,
} from "@platform/core";
