export type { CanonicalRequestParts } from "./canonical-message.js";
export {
  canonicalRequestMessage,
  REQUEST_MESSAGE_VERSION,
  repeatedQueryKey,
  sha256Hex,
} from "./canonical-message.js";
export { initCrypto } from "./init-crypto.js";
export type { KeypairOptions, Sr25519Keypair } from "./keys.js";
export { generateMnemonic, keypairFromMnemonic, keypairFromSeed } from "./keys.js";
export { isValidNonce, newNonce } from "./nonce.js";
export { signMessage, verifySignature } from "./signature.js";
export { DEFAULT_SIGNATURE_WINDOW_SECONDS, SIGNATURE_HEADERS } from "./signature-headers.js";
export type {
  HeadersLike,
  SignatureHeaders,
  SignedRequestErrorCode,
  SignedRequestFailure,
  SignedRequestResult,
  SignedRequestSuccess,
  SignRequestOptions,
  VerifySignedRequestInput,
} from "./signed-request.js";
export { signedRequestStatus, signRequest, verifySignedRequest } from "./signed-request.js";
export type { Ss58Account } from "./ss58.js";
export { decodeSs58, decodeSs58Account, encodeSs58, isValidSs58, SS58_PREFIX } from "./ss58.js";
export type { VerifyPool, VerifyPoolOptions } from "./verify-pool.js";
export { createVerifyPool } from "./verify-pool.js";
