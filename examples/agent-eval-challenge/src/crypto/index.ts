/**
 * The crypto primitives of the agent-eval challenge (node:crypto, and the SDK's capability
 * tokens): canonical JSON and its digest, the master key and its derived purpose keys, the
 * capability tokens of each scope, signed paging cursors, and sealed boxes for secrets at rest.
 */
export {
  CanonicalJsonError,
  canonicalDigest,
  canonicalJson,
  type JsonValue,
  parseCanonical,
} from "./canonical-json.js";
export { capabilityScope, capabilityToken, tokenHolder } from "./capability-scopes.js";
export { deriveKey, KeyLabel, loadSecretKey } from "./key-derivation.js";
export { mintId } from "./minted-id.js";
export { open, SealedBoxError, seal } from "./sealed-box.js";
export {
  openFromKey,
  type SealedToKey,
  sealToKey,
  x25519KeyPair,
  x25519PublicKey,
} from "./sealed-to-key.js";
export { sha256Hex } from "./sha256-hex.js";
export { CURSOR_MAX_LENGTH, CursorError, decodeCursor, encodeCursor } from "./signed-cursor.js";
