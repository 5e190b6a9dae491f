/**
 * @platform/challenge-sdk/signing: sr25519 keys and signatures for what a challenge signs or
 * checks beyond its miner-signed routes (those verify themselves): a grant a miner signs for a
 * worker, a miner's own tool signing its requests. Re-exported from core, so a challenge needs
 * no second platform package. Every function here needs `await initCrypto()` once first (a
 * started challenge has already done it). docs/challenge-sdk.md lists every export.
 */
export {
  DEFAULT_SIGNATURE_WINDOW_SECONDS,
  generateMnemonic,
  initCrypto,
  isValidNonce,
  isValidSs58,
  keypairFromMnemonic,
  newNonce,
  SIGNATURE_HEADERS,
  type SignatureHeaders,
  type SignRequestOptions,
  type Sr25519Keypair,
  signMessage,
  signRequest,
  verifySignature,
} from "@platform/core";
