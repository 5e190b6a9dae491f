export {
  type AdminTokenConfig,
  type AdminTokenSource,
  loadAdminToken,
  MIN_ADMIN_TOKEN_LENGTH,
} from "./admin-token.js";
export {
  CAPABILITY_ID_PATTERN,
  type CapabilityCheck,
  type CapabilityClaim,
  type CapabilityTokenSpec,
  type CapabilityVerdict,
  type IssuedCapabilityToken,
  issueCapabilityToken,
  readCapabilityToken,
  verifyCapabilityToken,
} from "./capability-token.js";
export {
  bearerToken,
  generateToken,
  hashToken,
  type IssuedToken,
  issueToken,
  secretsEqual,
  tokenHint,
  tokenMatchesHash,
} from "./tokens.js";
