import { createHash } from "node:crypto";
import { type ClientAnswer, WorkerClientError } from "@platform/challenge-sdk/client";
import { describe, expect, it } from "vitest";
import { WorkerFailure } from "./worker-failure.js";
import { checkedArtifact, deliverDocument } from "./worker-steps.js";

const zip = Buffer.from("PK\u0005\u0006 an agent");
const zipSha256 = createHash("sha256").update(zip).digest("hex");

function answer(status: number, bytes: Buffer, body: unknown = null): ClientAnswer {
  return {
    status,
    ok: status >= 200 && status < 300,
    headers: new Headers(),
    bytes,
    body,
    retryAfterMs: null,
    code: null,
    detail: null,
  };
}

async function failureOf(promise: Promise<unknown>): Promise<WorkerFailure<string>> {
  const error = await promise.then(
    () => null,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(WorkerFailure);
  return error as WorkerFailure<string>;
}

describe("checkedArtifact", () => {
  it("answers the bytes and their sha256 when they are the expected ZIP", async () => {
    const expected = { sha256: zipSha256, size: zip.length, by: "the assignment's" };
    expect(await checkedArtifact(Promise.resolve(answer(200, zip)), expected)).toEqual({
      bytes: zip,
      sha256: zipSha256,
    });
  });

  it("refuses an artifact route that does not serve it", async () => {
    const failure = await failureOf(
      checkedArtifact(Promise.resolve(answer(410, Buffer.from("{}"))), {
        sha256: zipSha256,
        by: "the plan's",
      }),
    );
    expect(failure).toMatchObject({
      reason: "artifact_mismatch",
      message: "the artifact route answered HTTP 410",
    });
  });

  it("refuses other bytes than the plan's, whatever the sender says", async () => {
    const other = Buffer.from("PK\u0005\u0006 another agent");
    const failure = await failureOf(
      checkedArtifact(Promise.resolve(answer(200, other)), { sha256: zipSha256, by: "the plan's" }),
    );
    expect(failure.reason).toBe("artifact_mismatch");
    expect(failure.message).toBe(
      `the artifact's sha256 ${createHash("sha256").update(other).digest("hex")} is not the plan's ${zipSha256}`,
    );
  });

  it("refuses the right digest with the wrong size when a size is expected", async () => {
    const failure = await failureOf(
      checkedArtifact(Promise.resolve(answer(200, zip)), {
        sha256: zipSha256,
        size: zip.length + 1,
        by: "the assignment's",
      }),
    );
    expect(failure.message).toBe(
      `the artifact's sha256 ${zipSha256} (${zip.length} bytes) is not the assignment's ${zipSha256}`,
    );
  });
});

describe("deliverDocument", () => {
  const document = {
    name: "report",
    again: "the same envelope",
    holder: "assignment",
    refused: "report_refused",
    outcome: true,
  } as const;

  it("answers the receipt's state and says what the verification decided", async () => {
    const lines: string[] = [];
    const receipt = { state: "allowed", verification: { status: "verified", outcome: "allowed" } };
    const state = await deliverDocument(
      async (options) => {
        options.onRetry?.({ attempt: 1, waitMs: 30_000, reason: "503 verifier_unavailable" });
        return answer(202, Buffer.alloc(0), receipt);
      },
      document,
      (line) => lines.push(line),
      120_000,
    );
    expect(state).toBe("allowed");
    expect(lines).toEqual([
      "report attempt 1: 503 verifier_unavailable; the same envelope again in 30 s",
      "report receipted (HTTP 202): assignment allowed, verification verified, outcome allowed",
    ]);
  });

  it("turns a refusal into the document's own failure", async () => {
    const failure = await failureOf(
      deliverDocument(
        async () => {
          throw new WorkerClientError("POST /report answered 409 report_conflict", "refused", 409);
        },
        document,
        () => undefined,
        1_000,
      ),
    );
    expect(failure).toMatchObject({
      reason: "report_refused",
      message: "POST /report answered 409 report_conflict",
    });
  });
});
