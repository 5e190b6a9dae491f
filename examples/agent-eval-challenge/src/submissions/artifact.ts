/**
 * The agent artifact as it arrives: strict base64 (one spelling per byte string, so the hash the
 * server computes is the hash of what the miner meant) and a ZIP of at most 1 MiB. Only the
 * container format is checked here: what the agent does is the review's business, in the VM.
 */
import { createHash } from "node:crypto";
import { HttpError } from "@platform/challenge-sdk";
import { MAX_ARTIFACT_BYTES } from "../api-schemas.js";

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
// End of central directory: signature, then 18 bytes, then a comment of up to 65535 bytes.
const EOCD_SIGNATURE = 0x06054b50;
const EOCD_MIN_BYTES = 22;

/** Decode `text` or answer 400 `invalid_base64` (whitespace, URL alphabet, bad padding). */
export function decodeArtifactBase64(text: string): Buffer {
  if (!BASE64.test(text)) {
    throw new HttpError(
      400,
      "invalid_base64",
      "artifact_b64 is not base64 (standard alphabet, padded, no whitespace)",
    );
  }
  const bytes = Buffer.from(text, "base64");
  // Non-zero padding bits are a second spelling of the same bytes: refused.
  if (bytes.toString("base64") !== text) {
    throw new HttpError(400, "invalid_base64", "artifact_b64 is not canonical base64");
  }
  return bytes;
}

/** The ZIP's own checks: size (413 `artifact_too_large`) and format (400 `invalid_artifact`). */
export function checkArtifact(bytes: Uint8Array): { bytes: Buffer; sha256: string } {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (buffer.length === 0) throw new HttpError(400, "invalid_artifact", "the artifact is empty");
  if (buffer.length > MAX_ARTIFACT_BYTES) {
    throw new HttpError(
      413,
      "artifact_too_large",
      `the artifact is ${buffer.length} bytes; at most ${MAX_ARTIFACT_BYTES} are accepted`,
    );
  }
  if (!hasEndOfCentralDirectory(buffer)) {
    throw new HttpError(400, "invalid_artifact", "the artifact is not a ZIP archive");
  }
  return { bytes: buffer, sha256: createHash("sha256").update(buffer).digest("hex") };
}

/** A ZIP ends with its central directory record, whose comment length reaches the end exactly. */
function hasEndOfCentralDirectory(bytes: Buffer): boolean {
  if (bytes.length < EOCD_MIN_BYTES) return false;
  const earliest = Math.max(0, bytes.length - EOCD_MIN_BYTES - 0xffff);
  for (let at = bytes.length - EOCD_MIN_BYTES; at >= earliest; at -= 1) {
    if (bytes.readUInt32LE(at) !== EOCD_SIGNATURE) continue;
    if (at + EOCD_MIN_BYTES + bytes.readUInt16LE(at + 20) === bytes.length) return true;
  }
  return false;
}
