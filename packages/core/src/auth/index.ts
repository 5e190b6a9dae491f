export {
  type AdminTokenConfig,
  type AdminTokenSource,
  loadAdminToken,
  MIN_ADMIN_TOKEN_LENGTH,
} from "./admin-token.js";
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
