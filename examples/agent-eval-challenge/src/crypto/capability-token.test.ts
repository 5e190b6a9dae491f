import { createHash, createHmac, randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  CapabilityDomain,
  capabilityTokenSha256,
  checkCapabilityToken,
  issueCapabilityToken,
  parseCapabilityToken,
} from "./capability-token.js";

const key = Buffer.alloc(32, 7);
const domain = CapabilityDomain.reviewAssignment;

describe("issueCapabilityToken", () => {
  it("is id.base64url(HMAC-SHA256(key, domain NUL id)) and its sha256", () => {
    const issued = issueCapabilityToken(key, domain, "asg_01J9");
    const mac = createHmac("sha256", key).update(`${domain}\0asg_01J9`).digest("base64url");
    expect(issued.token).toBe(`asg_01J9.${mac}`);
    expect(issued.sha256).toBe(createHash("sha256").update(issued.token).digest("hex"));
    expect(capabilityTokenSha256(issued.token)).toBe(issued.sha256);
    expect(issued.token).toMatch(/^asg_01J9\.[A-Za-z0-9_-]{43}$/);
  });

  it("is deterministic per key, domain and id, and differs when any of them changes", () => {
    const base = issueCapabilityToken(key, domain, "a1").token;
    expect(issueCapabilityToken(key, domain, "a1").token).toBe(base);
    expect(issueCapabilityToken(Buffer.alloc(32, 8), domain, "a1").token).not.toBe(base);
    expect(issueCapabilityToken(key, CapabilityDomain.evalRun, "a1").token).not.toBe(base);
    expect(issueCapabilityToken(key, domain, "a2").token).not.toBe(base);
  });

  it.each(["", "a".repeat(65), "has space", "dot.ted", "slash/", "ünï", "nul\0"])(
    "refuses the id %j",
    (id) => {
      expect(() => issueCapabilityToken(key, domain, id)).toThrow(RangeError);
    },
  );

  it("refuses a domain with a NUL (it would blur the domain/id boundary) and a short key", () => {
    expect(() => issueCapabilityToken(key, "review\0x", "a")).toThrow(RangeError);
    expect(() => issueCapabilityToken(key, "", "a")).toThrow(RangeError);
    expect(() => issueCapabilityToken(Buffer.alloc(16), domain, "a")).toThrow(RangeError);
  });
});

describe("parseCapabilityToken", () => {
  it("returns the id and the 32-byte MAC of a well-formed token", () => {
    const { token } = issueCapabilityToken(key, domain, "A-z_09".padEnd(64, "x"));
    const parsed = parseCapabilityToken(token);
    expect(parsed?.id).toBe("A-z_09".padEnd(64, "x"));
    expect(parsed?.mac.toString("base64url")).toBe(token.split(".")[1]);
  });

  it.each([
    ["empty", ""],
    ["no dot", "abc"],
    ["no id", `.${"A".repeat(43)}`],
    ["two dots", `a.b.${"A".repeat(43)}`],
    ["a short MAC", `a.${"A".repeat(42)}`],
    ["a long MAC", `a.${"A".repeat(44)}`],
    ["padding", `a.${"A".repeat(43)}=`],
    ["standard base64", `a.${"A".repeat(42)}+`],
    ["a 65-character id", `${"a".repeat(65)}.${"A".repeat(43)}`],
    ["whitespace", ` a.${"A".repeat(43)}`],
    ["a trailing newline", `a.${"A".repeat(43)}\n`],
    ["spare bits set in the last character", `a.${"A".repeat(42)}B`],
    ["a huge header", "a".repeat(1 << 20)],
  ])("refuses %s", (_label, token) => {
    expect(parseCapabilityToken(token)).toBeNull();
  });
});

describe("checkCapabilityToken", () => {
  const issued = issueCapabilityToken(key, domain, "assignment_42");

  it("accepts the issued token against its stored hash", () => {
    expect(checkCapabilityToken(key, domain, issued.token, issued.sha256)).toBe(true);
  });

  it("refuses the token in another domain (an eval run token is not a review token)", () => {
    expect(checkCapabilityToken(key, CapabilityDomain.evalRun, issued.token, issued.sha256)).toBe(
      false,
    );
  });

  it("refuses another id's MAC grafted on this id, even with the grafted token's own hash", () => {
    const other = issueCapabilityToken(key, domain, "assignment_43");
    const grafted = `assignment_42.${other.token.split(".")[1]}`;
    expect(checkCapabilityToken(key, domain, grafted, capabilityTokenSha256(grafted))).toBe(false);
    expect(checkCapabilityToken(key, domain, grafted, issued.sha256)).toBe(false);
  });

  it("refuses a valid token of another id against this row's hash (the row binds the id)", () => {
    const other = issueCapabilityToken(key, domain, "assignment_43");
    expect(checkCapabilityToken(key, domain, other.token, issued.sha256)).toBe(false);
  });

  it("refuses a forged MAC made with another key", () => {
    const forged = issueCapabilityToken(randomBytes(32), domain, "assignment_42").token;
    expect(checkCapabilityToken(key, domain, forged, capabilityTokenSha256(forged))).toBe(false);
  });

  it("refuses a revoked token (its hash replaced)", () => {
    const replacement = createHash("sha256").update("revoked").digest("hex");
    expect(checkCapabilityToken(key, domain, issued.token, replacement)).toBe(false);
  });

  it.each([
    ["truncated by one character", issued.token.slice(0, -1)],
    ["truncated to the id", "assignment_42"],
    ["with an extra dot", `${issued.token}.`],
    ["with a dot inserted", issued.token.replace(".", "..")],
    ["empty", ""],
    ["with the id's case flipped", `ASSIGNMENT_42.${issued.token.split(".")[1]}`],
    ["with the MAC's case flipped", `assignment_42.${flipCase(issued.token.split(".")[1] ?? "")}`],
    [
      "with one MAC character changed",
      `${issued.token.slice(0, -2)}${issued.token.at(-2) === "A" ? "B" : "A"}${issued.token.at(-1)}`,
    ],
    ["with a Bearer prefix left on", `Bearer ${issued.token}`],
  ])("refuses the token %s", (_label, token) => {
    expect(checkCapabilityToken(key, domain, token, issued.sha256)).toBe(false);
    expect(checkCapabilityToken(key, domain, token, capabilityTokenSha256(token))).toBe(false);
  });

  it("refuses a stored hash that is not 64 lower-case hex characters", () => {
    expect(checkCapabilityToken(key, domain, issued.token, issued.sha256.toUpperCase())).toBe(
      false,
    );
    expect(checkCapabilityToken(key, domain, issued.token, "")).toBe(false);
    expect(checkCapabilityToken(key, domain, issued.token, issued.sha256.slice(0, 62))).toBe(false);
  });
});

function flipCase(text: string): string {
  return [...text]
    .map((char) => (char === char.toUpperCase() ? char.toLowerCase() : char.toUpperCase()))
    .join("");
}
