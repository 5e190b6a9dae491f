import { HttpError, isValidNonce, isValidSs58, SS58_PREFIX } from "@platform/core";
import { PLATFORM_HEADERS } from "./proxy-contract/proxy-contract.js";
import type { BridgeMiner } from "./route-context.js";

const REQUEST_HASH = /^[0-9a-f]{64}$/;
// A plain file name: no separator, no leading dot (so never `.` or `..`), no control character.
const FILENAME = /^[A-Za-z0-9_](?:[A-Za-z0-9._ ()+-]{0,253}[A-Za-z0-9._()+-])?$/;

function invalid(message: string): HttpError {
  return new HttpError(400, "invalid_verified_identity", message);
}

/**
 * The miner the master verified, from the bridge headers ONLY (X-Platform-Verified-Hotkey or
 * X-Core-Verified-Hotkey, X-Core-Verified-Nonce, X-Core-Request-Hash). Miner-sent X-Hotkey and
 * X-Signature are never read here. 400 `missing_verified_identity` without a hotkey, 400
 * `invalid_verified_identity` when the two hotkey headers disagree or a value is malformed.
 */
export function readBridgeIdentity(headers: Headers): BridgeMiner {
  const platform = headers.get(PLATFORM_HEADERS.verifiedHotkey)?.trim() || null;
  const core = headers.get(PLATFORM_HEADERS.coreVerifiedHotkey)?.trim() || null;
  if (platform === null && core === null) {
    throw new HttpError(
      400,
      "missing_verified_identity",
      "A bridge request needs X-Platform-Verified-Hotkey (or X-Core-Verified-Hotkey) from the master",
    );
  }
  if (platform !== null && core !== null && platform !== core) {
    throw invalid("X-Platform-Verified-Hotkey and X-Core-Verified-Hotkey disagree");
  }
  const hotkey = (platform ?? core)!;
  if (!isValidSs58(hotkey, SS58_PREFIX))
    throw invalid("The verified hotkey is not an ss58 address");
  const nonce = headers.get(PLATFORM_HEADERS.coreVerifiedNonce)?.trim() || null;
  if (nonce !== null && !isValidNonce(nonce)) throw invalid("X-Core-Verified-Nonce is malformed");
  const requestHash = headers.get(PLATFORM_HEADERS.coreRequestHash)?.trim() || null;
  if (requestHash !== null && !REQUEST_HASH.test(requestHash)) {
    throw invalid("X-Core-Request-Hash must be 64 lowercase hex characters");
  }
  return { hotkey, nonce, requestHash };
}

/** X-Submission-Filename when it is a plain file name; 400 `invalid_filename` otherwise. */
export function readSubmissionFilename(headers: Headers): string | null {
  const name = headers.get(PLATFORM_HEADERS.submissionFilename);
  if (name === null) return null;
  if (!FILENAME.test(name)) {
    throw new HttpError(400, "invalid_filename", "X-Submission-Filename must be a plain file name");
  }
  return name;
}
