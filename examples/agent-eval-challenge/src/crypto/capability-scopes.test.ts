import { createHmac } from "node:crypto";
import { issueCapabilityToken } from "@platform/challenge-sdk/tokens";
import { describe, expect, it } from "vitest";
import { capabilityScope, capabilityToken, tokenHolder } from "./capability-scopes.js";
import { deriveKey, KeyLabel } from "./key-derivation.js";

const secretKey = Buffer.alloc(32, 9);

describe("capabilityScope", () => {
  // Stored token hashes and tokens already delivered to VMs depend on these exact bytes: a
  // changed scope or label would revoke every one of them.
  it.each([
    ["reviewAssignment", "agent-eval/review-assignment/v1", KeyLabel.reviewToken],
    ["evalRun", "agent-eval/eval-run/v1", KeyLabel.runToken],
    ["evalAttempt", "agent-eval/eval-attempt/v1", KeyLabel.attemptToken],
  ] as const)(
    "keeps the %s token as it was issued: id.HMAC(scope NUL id)",
    (kind, scope, label) => {
      const { token } = issueCapabilityToken({ ...capabilityScope(secretKey, kind), id: "id_42" });
      const mac = createHmac("sha256", deriveKey(secretKey, label))
        .update(`${scope}\0id_42`)
        .digest("base64url");
      expect(token).toBe(`id_42.${mac}`);
    },
  );

  it("gives each kind its own key and scope", () => {
    const kinds = (["reviewAssignment", "evalRun", "evalAttempt"] as const).map((kind) =>
      capabilityScope(secretKey, kind),
    );
    expect(new Set(kinds.map((k) => k.scope)).size).toBe(3);
    expect(new Set(kinds.map((k) => k.key.toString("hex"))).size).toBe(3);
  });
});

describe("tokenHolder", () => {
  const issued = capabilityToken(secretKey, "evalRun", "run_1");
  const row = { id: "run_1", state: "running", token_sha256: issued.hash };

  it("answers the record without its stored hash for the record's own live token", () => {
    expect(tokenHolder(issued.token, secretKey, "evalRun", "run_1", row)).toEqual({
      id: "run_1",
      state: "running",
    });
  });

  it("opens nothing for another record's, scope's or key's token, a changed hash or no record", () => {
    const refused: [string, Buffer, "evalRun" | "evalAttempt", typeof row | undefined][] = [
      [capabilityToken(secretKey, "evalRun", "run_2").token, secretKey, "evalRun", row],
      [capabilityToken(secretKey, "evalAttempt", "run_1").token, secretKey, "evalRun", row],
      [issued.token, secretKey, "evalAttempt", row],
      [capabilityToken(Buffer.alloc(32, 1), "evalRun", "run_1").token, secretKey, "evalRun", row],
      [issued.token, secretKey, "evalRun", { ...row, token_sha256: "0".repeat(64) }],
      [issued.token, secretKey, "evalRun", undefined],
    ];
    for (const [token, key, kind, record] of refused) {
      expect(tokenHolder(token, key, kind, "run_1", record)).toBeNull();
    }
  });
});
