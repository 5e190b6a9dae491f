/**
 * The crypto primitives of the agent-eval challenge (node:crypto only): canonical JSON and its
 * digest, the master key and its derived purpose keys, the capability tokens' scopes, signed paging
 * cursors, and sealed boxes for secrets at rest.
 */
export {
  CanonicalJsonError,
  type CanonicalJsonErrorCode,
  canonicalDigest,
  canonicalJson,
  type JsonValue,
  MAX_CANONICAL_DEPTH,
  parseCanonical,
} from "./canonical-json.js";
export { type CapabilityKind, capabilityScope } from "./capability-scopes.js";
export {
  deriveKey,
  GENERATED_KEY_FILE_NAME,
  KeyLabel,
  loadSecretKey,
  SECRET_KEY_BYTES,
  type SecretKeySource,
} from "./key-derivation.js";
export {
  open,
  SEALED_BOX_OVERHEAD,
  SEALED_BOX_VERSION,
  SealedBoxError,
  type SealedBoxErrorCode,
  seal,
} from "./sealed-box.js";
export {
  CURSOR_MAX_LENGTH,
  CursorError,
  type CursorErrorCode,
  decodeCursor,
  encodeCursor,
} from "./signed-cursor.js";
