import { createHash } from "node:crypto";

/** sha256 of `data` (a string as its UTF-8 bytes) as lower-case hex, no prefix. */
export function sha256Hex(data: string | Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}
