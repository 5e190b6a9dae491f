import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  EVAL_RESULT_REPORT_DATA_DOMAIN,
  evalResultReportData,
  REVIEW_REPORT_DATA_DOMAIN,
  reviewReportData,
} from "./report-data.js";

const review = {
  assignmentDigest: "a".repeat(64),
  sessionId: "rs_01J9Z8",
  nonce: "n-4f1c2d",
  issuedAt: "2026-11-23T13:00:00.000Z",
  reportedAt: "2026-11-23T13:07:12.345Z",
};
const evalResult = { resultDigest: "b".repeat(64), runId: "run_7", nonce: "n-99" };

// The documented preimage, written out independently of the implementation.
function lengthPrefixed(parts: string[]): Buffer {
  return Buffer.concat(
    parts.flatMap((part) => {
      const bytes = Buffer.from(part, "utf8");
      const length = Buffer.alloc(4);
      length.writeUInt32BE(bytes.length);
      return [length, bytes];
    }),
  );
}

describe("report_data bindings", () => {
  it("are sha256 of the length-prefixed, domain-tagged preimage, zero-padded to 64 bytes", () => {
    const digest = createHash("sha256")
      .update(
        lengthPrefixed([
          "platform/agent-eval/review-report-data/v1",
          review.assignmentDigest,
          review.sessionId,
          review.nonce,
          review.issuedAt,
          review.reportedAt,
        ]),
      )
      .digest();
    const data = reviewReportData(review);
    expect(data).toHaveLength(64);
    expect(data.subarray(0, 32)).toEqual(digest);
    expect(data.subarray(32)).toEqual(Buffer.alloc(32));
    expect(REVIEW_REPORT_DATA_DOMAIN).toBe("platform/agent-eval/review-report-data/v1");

    const evalDigest = createHash("sha256")
      .update(
        lengthPrefixed([
          EVAL_RESULT_REPORT_DATA_DOMAIN,
          evalResult.resultDigest,
          evalResult.runId,
          evalResult.nonce,
        ]),
      )
      .digest();
    expect(evalResultReportData(evalResult).subarray(0, 32)).toEqual(evalDigest);
  });

  it("are deterministic", () => {
    expect(reviewReportData({ ...review })).toEqual(reviewReportData(review));
    expect(evalResultReportData({ ...evalResult })).toEqual(evalResultReportData(evalResult));
  });

  it("change with every field", () => {
    const base = reviewReportData(review).toString("hex");
    const variants = [
      { assignmentDigest: "c".repeat(64) },
      { sessionId: "rs_01J9Z9" },
      { nonce: "n-4f1c2e" },
      { issuedAt: "2026-11-23T13:00:00.001Z" },
      { reportedAt: "2026-11-23T13:07:12.346Z" },
    ];
    const seen = new Set([base]);
    for (const variant of variants)
      seen.add(reviewReportData({ ...review, ...variant }).toString("hex"));
    expect(seen.size).toBe(variants.length + 1);

    const evalBase = evalResultReportData(evalResult).toString("hex");
    for (const variant of [
      { resultDigest: "d".repeat(64) },
      { runId: "run_8" },
      { nonce: "n-98" },
    ]) {
      expect(evalResultReportData({ ...evalResult, ...variant }).toString("hex")).not.toBe(
        evalBase,
      );
    }
  });

  it("cannot be confused by moving bytes between adjacent fields", () => {
    const a = reviewReportData({ ...review, sessionId: "ab", nonce: "c" });
    const b = reviewReportData({ ...review, sessionId: "a", nonce: "bc" });
    expect(a).not.toEqual(b);
  });

  it("separate the review and eval domains even for identical field values", () => {
    const shared = { digest: "e".repeat(64), id: "x", nonce: "y" };
    const asEval = evalResultReportData({
      resultDigest: shared.digest,
      runId: shared.id,
      nonce: shared.nonce,
    });
    const unprefixed = createHash("sha256")
      .update(lengthPrefixed([REVIEW_REPORT_DATA_DOMAIN, shared.digest, shared.id, shared.nonce]))
      .digest();
    expect(asEval.subarray(0, 32)).not.toEqual(unprefixed);
  });

  it("refuse malformed input rather than hash it", () => {
    expect(() => reviewReportData({ ...review, assignmentDigest: "A".repeat(64) })).toThrow(
      RangeError,
    );
    expect(() => reviewReportData({ ...review, assignmentDigest: "a".repeat(63) })).toThrow(
      RangeError,
    );
    expect(() => reviewReportData({ ...review, nonce: "" })).toThrow(RangeError);
    expect(() => evalResultReportData({ ...evalResult, runId: "" })).toThrow(RangeError);
  });
});
