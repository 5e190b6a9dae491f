/**
 * GET /internal/v1/reviews/{session_id}/evidence/{object_ref} (rule 11): one evidence object,
 * exactly the bytes the review VM attached (the envelope's core commits to their length and
 * sha256), opened from its sealed box; or one byte range of it.
 *
 * Range (RFC 9110 §14): one `bytes=` range (first-last, first-, or -suffix) answers 206 with
 * Content-Range. Anything else (several ranges, a malformed header, a range past the end) is a
 * 416 with `Content-Range: bytes *\/<length>`: the validator asked for something precise, and a
 * silent 200 with the whole object would hide its bug.
 */
import { HttpError, type Logger, type Sql } from "@platform/challenge-sdk";
import { deriveKey, KeyLabel, open, SealedBoxError } from "../crypto/index.js";
import { existingReviewSession } from "./_session.js";
import { evidenceAad } from "./receive-report.js";

export const EVIDENCE_ERROR_CODES = {
  /** 404: no such object in this session. */
  evidenceNotFound: "evidence_not_found",
  /** 416: a Range this route does not serve. */
  rangeNotSatisfiable: "range_not_satisfiable",
  /** 500: the sealed object does not open (tampered or moved); no byte is served. */
  evidenceIntegrityFailure: "evidence_integrity_failure",
} as const;

/** A satisfiable single range, inclusive, or the reason it is not one. */
export type ParsedRange = { first: number; last: number } | { unsatisfiable: string };

/** One `bytes=` range of an object of `length` bytes (RFC 9110 §14.1.2). */
export function parseSingleRange(header: string, length: number): ParsedRange {
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!match || (match[1] === "" && match[2] === "")) {
    return { unsatisfiable: "one range of the form bytes=first-last, first- or -suffix" };
  }
  const [, firstText, lastText] = match as unknown as [string, string, string];
  if (length === 0) return { unsatisfiable: "the object is empty" };
  if (firstText === "") {
    const suffix = Number(lastText);
    if (suffix === 0) return { unsatisfiable: "a zero-length suffix" };
    return { first: Math.max(0, length - suffix), last: length - 1 };
  }
  const first = Number(firstText);
  const last = lastText === "" ? length - 1 : Math.min(Number(lastText), length - 1);
  if (first >= length) return { unsatisfiable: "the range starts past the end" };
  if (lastText !== "" && Number(lastText) < first) {
    return { unsatisfiable: "the range ends before it starts" };
  }
  return { first, last };
}

export async function serveEvidence(
  sql: Sql,
  input: {
    sessionId: string;
    objectRef: string;
    range: string | null;
    secretKey: Buffer;
    log: Logger;
  },
): Promise<Response> {
  await existingReviewSession(sql, input.sessionId);
  const [row] = await sql<
    { sealed: Uint8Array; length: number; sha256: string; media_type: string }[]
  >`
    select sealed, length, sha256, media_type from review_evidence
    where session_id = ${input.sessionId} and object_ref = ${input.objectRef}`;
  if (!row) {
    throw new HttpError(
      404,
      EVIDENCE_ERROR_CODES.evidenceNotFound,
      `No evidence object ${input.objectRef} in review session ${input.sessionId}.`,
    );
  }
  let bytes: Buffer;
  try {
    bytes = open(
      deriveKey(input.secretKey, KeyLabel.evidenceEncryption),
      row.sealed,
      evidenceAad(input.sessionId, input.objectRef),
    );
  } catch (error) {
    if (!(error instanceof SealedBoxError)) throw error;
    input.log.error("ALERT: a sealed evidence object does not open", {
      session_id: input.sessionId,
      object_ref: input.objectRef,
    });
    throw new HttpError(
      500,
      EVIDENCE_ERROR_CODES.evidenceIntegrityFailure,
      "The stored evidence object failed its integrity check; no byte is served.",
    );
  }
  const headers: Record<string, string> = {
    "content-type": "application/octet-stream",
    "accept-ranges": "bytes",
    etag: `"${row.sha256}"`,
    "cache-control": "no-store",
    "x-evidence-sha256": row.sha256,
    "x-evidence-media-type": row.media_type,
  };
  if (input.range === null) {
    return new Response(new Uint8Array(bytes), { status: 200, headers });
  }
  const range = parseSingleRange(input.range, bytes.length);
  if ("unsatisfiable" in range) {
    throw new HttpError(
      416,
      EVIDENCE_ERROR_CODES.rangeNotSatisfiable,
      `Range not satisfiable: ${range.unsatisfiable}.`,
      { headers: { "content-range": `bytes */${bytes.length}` } },
    );
  }
  return new Response(new Uint8Array(bytes.subarray(range.first, range.last + 1)), {
    status: 206,
    headers: { ...headers, "content-range": `bytes ${range.first}-${range.last}/${bytes.length}` },
  });
}
