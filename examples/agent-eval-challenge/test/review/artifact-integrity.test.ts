// Rule 17's integrity check on its own: the database refuses a row whose artifact bytes and
// sha256 disagree, so the mismatch branch is tested on a fake row: a 500
// artifact_integrity_failure, an error log, and never the bytes.
import { HttpError, type Logger } from "@platform/challenge-sdk";
import { describe, expect, it } from "vitest";
import { verifiedArtifactBytes } from "../../src/review/assignment-artifact.js";
import { sha256Hex } from "./review-test-kit.js";

function recordingLogger(): { log: Logger; errors: [string, unknown][] } {
  const errors: [string, unknown][] = [];
  const noop = () => {};
  const log: Logger = {
    debug: noop,
    info: noop,
    warn: noop,
    error: (message, fields) => {
      errors.push([message, fields]);
    },
    child: () => log,
  };
  return { log, errors };
}

describe("artifact integrity (rule 17)", () => {
  it("returns the bytes when they hash to the recorded sha256", () => {
    const { log, errors } = recordingLogger();
    const bytes = new TextEncoder().encode("zip bytes");
    expect(
      verifiedArtifactBytes(
        { submissionId: "1", bytes, expectedSha256: sha256Hex("zip bytes") },
        log,
      ),
    ).toBe(bytes);
    expect(errors).toEqual([]);
  });

  it("refuses corrupted bytes with 500 artifact_integrity_failure and an error log", () => {
    const { log, errors } = recordingLogger();
    const corrupted = new TextEncoder().encode("zip bytez");
    let thrown: unknown;
    try {
      verifiedArtifactBytes(
        { submissionId: "7", bytes: corrupted, expectedSha256: sha256Hex("zip bytes") },
        log,
      );
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(HttpError);
    expect((thrown as HttpError).status).toBe(500);
    expect((thrown as HttpError).code).toBe("artifact_integrity_failure");
    expect(errors).toHaveLength(1);
    expect(errors[0]![1]).toMatchObject({
      submission_id: "7",
      expected_sha256: sha256Hex("zip bytes"),
      actual_sha256: sha256Hex("zip bytez"),
    });
  });
});
