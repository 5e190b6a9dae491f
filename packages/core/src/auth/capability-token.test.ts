import { createHash, createHmac, randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  issueCapabilityToken,
  readCapabilityToken,
  verifyCapabilityToken,
} from "./capability-token.js";
import { hashToken, tokenMatchesHash } from "./tokens.js";

const key = Buffer.alloc(32, 7);
const scope = "test-challenge/review-assignment/v1";
const otherScope = "test-challenge/eval-run/v1";

function flipCase(text: string): string {
  return [...text]
    .map((char) => (char === char.toUpperCase() ? char.toLowerCase() : char.toUpperCase()))
    .join("");
}

/** The token with its last MAC character replaced (the spare bits left clear). */
function withMacChanged(token: string): string {
  const last = token.at(-2) === "A" ? "B" : "A";
  return `${token.slice(0, -2)}${last}${token.at(-1)}`;
}

describe("issueCapabilityToken", () => {
  it("is id.base64url(HMAC-SHA256(key, scope NUL id)) with its sha256 as the stored hash", () => {
    const issued = issueCapabilityToken({ key, scope, id: "asg_01J9" });
    const mac = createHmac("sha256", key).update(`${scope}\0asg_01J9`).digest("base64url");
    expect(issued.token).toBe(`asg_01J9.${mac}`);
    expect(issued.hash).toBe(createHash("sha256").update(issued.token).digest("hex"));
    expect(tokenMatchesHash(issued.token, issued.hash)).toBe(true);
    expect(issued.hint).toBe(`${issued.token.slice(0, 4)}…${issued.token.slice(-4)}`);
    expect(issued).toMatchObject({ id: "asg_01J9", expiresAt: null });
  });

  it("puts an expiry (whole seconds) inside the MAC: id.expires.mac", () => {
    const issued = issueCapabilityToken({
      key,
      scope,
      id: "run_7",
      expiresAt: new Date("2030-01-01T00:00:00.900Z"),
    });
    const seconds = String(Date.parse("2030-01-01T00:00:00Z") / 1000);
    const mac = createHmac("sha256", key).update(`${scope}\0run_7\0${seconds}`).digest("base64url");
    expect(issued.token).toBe(`run_7.${seconds}.${mac}`);
    expect(issued.expiresAt).toEqual(new Date("2030-01-01T00:00:00Z"));
  });

  it("is deterministic per key, scope, id and expiry, and differs when any of them changes", () => {
    const at = new Date("2030-01-01T00:00:00Z");
    const base = issueCapabilityToken({ key, scope, id: "a1", expiresAt: at }).token;
    expect(issueCapabilityToken({ key, scope, id: "a1", expiresAt: at }).token).toBe(base);
    for (const other of [
      { key: Buffer.alloc(32, 8), scope, id: "a1", expiresAt: at },
      { key, scope: otherScope, id: "a1", expiresAt: at },
      { key, scope, id: "a2", expiresAt: at },
      { key, scope, id: "a1", expiresAt: new Date(at.getTime() + 1000) },
      { key, scope, id: "a1" },
    ]) {
      expect(issueCapabilityToken(other).token).not.toBe(base);
    }
  });

  it.each(["", "a".repeat(65), "has space", "dot.ted", "slash/", "ünï", "nul\0"])(
    "refuses the id %j",
    (id) => {
      expect(() => issueCapabilityToken({ key, scope, id })).toThrow(RangeError);
    },
  );

  it("refuses a scope with a NUL (it would blur the scope/id boundary), an empty one, a short key", () => {
    expect(() => issueCapabilityToken({ key, scope: "review\0x", id: "a" })).toThrow(RangeError);
    expect(() => issueCapabilityToken({ key, scope: "", id: "a" })).toThrow(RangeError);
    expect(() => issueCapabilityToken({ key: Buffer.alloc(16), scope, id: "a" })).toThrow(
      RangeError,
    );
  });

  it("refuses an expiry it cannot spell in one way", () => {
    for (const expiresAt of [
      new Date(Number.NaN),
      new Date(0),
      new Date(-5000),
      new Date(8.64e15),
    ]) {
      expect(() => issueCapabilityToken({ key, scope, id: "a", expiresAt })).toThrow(RangeError);
    }
  });
});

describe("readCapabilityToken", () => {
  it("returns what a well-formed token claims, verifying nothing", () => {
    const id = "A-z_09".padEnd(64, "x");
    expect(readCapabilityToken(issueCapabilityToken({ key, scope, id }).token)).toEqual({
      id,
      expiresAt: null,
    });
    const at = new Date("2031-05-06T07:08:09Z");
    const forged = issueCapabilityToken({ key: randomBytes(32), scope, id, expiresAt: at });
    expect(readCapabilityToken(forged.token)).toEqual({ id, expiresAt: at });
  });

  it.each([
    ["empty", ""],
    ["no dot", "abc"],
    ["no id", `.${"A".repeat(43)}`],
    ["an empty expiry", `a..${"A".repeat(43)}`],
    ["a non-numeric expiry", `a.x1.${"A".repeat(43)}`],
    ["an expiry with a leading zero", `a.0123.${"A".repeat(43)}`],
    ["a zero expiry", `a.0.${"A".repeat(43)}`],
    ["a 13-digit expiry", `a.${"1".repeat(13)}.${"A".repeat(43)}`],
    ["three dots", `a.1.2.${"A".repeat(43)}`],
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
    expect(readCapabilityToken(token)).toBeNull();
    expect(verifyCapabilityToken(token, { key, scope, storedHash: hashToken(token) })).toEqual({
      ok: false,
      reason: "invalid",
    });
  });
});

describe("verifyCapabilityToken", () => {
  const issued = issueCapabilityToken({ key, scope, id: "assignment_42" });
  const check = { key, scope, storedHash: issued.hash };

  it("accepts the issued token against its stored hash, naming its id", () => {
    expect(verifyCapabilityToken(issued.token, check)).toEqual({
      ok: true,
      id: "assignment_42",
      expiresAt: null,
    });
    expect(verifyCapabilityToken(issued.token, { ...check, id: "assignment_42" }).ok).toBe(true);
  });

  it("refuses the token in another scope (an eval run token is not a review token)", () => {
    expect(verifyCapabilityToken(issued.token, { ...check, scope: otherScope })).toEqual({
      ok: false,
      reason: "invalid",
    });
    // Not even when the other scope's record stores this very hash.
    const run = issueCapabilityToken({ key, scope: otherScope, id: "assignment_42" });
    expect(verifyCapabilityToken(run.token, check).ok).toBe(false);
    expect(verifyCapabilityToken(run.token, { ...check, storedHash: run.hash }).ok).toBe(false);
  });

  it("refuses a genuine token of another id where one id is expected (the path's)", () => {
    expect(verifyCapabilityToken(issued.token, { ...check, id: "assignment_43" })).toEqual({
      ok: false,
      reason: "invalid",
    });
  });

  it("refuses a tampered id: another id's MAC grafted on, even with its own hash stored", () => {
    const other = issueCapabilityToken({ key, scope, id: "assignment_43" });
    const grafted = `assignment_42.${other.token.split(".")[1]}`;
    expect(verifyCapabilityToken(grafted, { ...check, storedHash: hashToken(grafted) }).ok).toBe(
      false,
    );
    expect(verifyCapabilityToken(grafted, check).ok).toBe(false);
    expect(verifyCapabilityToken(`ASSIGNMENT_42.${issued.token.split(".")[1]}`, check).ok).toBe(
      false,
    );
  });

  it("refuses a tampered MAC: one character, its case, another key's", () => {
    for (const token of [
      withMacChanged(issued.token),
      `assignment_42.${flipCase(issued.token.split(".")[1] ?? "")}`,
      issueCapabilityToken({ key: randomBytes(32), scope, id: "assignment_42" }).token,
    ]) {
      expect(verifyCapabilityToken(token, { ...check, storedHash: hashToken(token) })).toEqual({
        ok: false,
        reason: "invalid",
      });
    }
  });

  it("refuses a revoked token: its stored hash replaced, or none stored any more", () => {
    const replaced = createHash("sha256").update("revoked").digest("hex");
    for (const storedHash of [replaced, null, undefined]) {
      expect(verifyCapabilityToken(issued.token, { ...check, storedHash })).toEqual({
        ok: false,
        reason: "revoked",
      });
    }
  });

  it("refuses a valid token of another id against this record's hash (the record binds the id)", () => {
    const other = issueCapabilityToken({ key, scope, id: "assignment_43" });
    expect(verifyCapabilityToken(other.token, check).ok).toBe(false);
  });

  it.each([
    ["truncated by one character", issued.token.slice(0, -1)],
    ["truncated to the id", "assignment_42"],
    ["with an extra dot", `${issued.token}.`],
    ["with a dot inserted", issued.token.replace(".", "..")],
    ["empty", ""],
    ["with a Bearer prefix left on", `Bearer ${issued.token}`],
    ["oversized", `${issued.token}${"A".repeat(200)}`],
    ["as a megabyte", "A".repeat(1 << 20)],
  ])("refuses the token %s", (_label, token) => {
    expect(verifyCapabilityToken(token, check).ok).toBe(false);
    expect(verifyCapabilityToken(token, { ...check, storedHash: hashToken(token) }).ok).toBe(false);
  });

  it("refuses a stored hash that is not 64 lower-case hex characters", () => {
    for (const storedHash of [issued.hash.toUpperCase(), "", issued.hash.slice(0, 62)]) {
      expect(verifyCapabilityToken(issued.token, { ...check, storedHash }).ok).toBe(false);
    }
  });

  describe("with an expiry", () => {
    const expiresAt = new Date("2030-01-01T00:00:00Z");
    const timed = issueCapabilityToken({ key, scope, id: "run_9", expiresAt });
    const timedCheck = { key, scope, storedHash: timed.hash };
    const before = new Date(expiresAt.getTime() - 1000);

    it("opens before its expiry and never from it on", () => {
      expect(verifyCapabilityToken(timed.token, { ...timedCheck, now: before })).toEqual({
        ok: true,
        id: "run_9",
        expiresAt,
      });
      for (const now of [expiresAt, new Date(expiresAt.getTime() + 1)]) {
        expect(verifyCapabilityToken(timed.token, { ...timedCheck, now })).toEqual({
          ok: false,
          reason: "expired",
        });
      }
    });

    it("judges against the clock by default", () => {
      const past = issueCapabilityToken({
        key,
        scope,
        id: "run_9",
        expiresAt: new Date(Date.now() - 1000),
      });
      expect(verifyCapabilityToken(past.token, { key, scope, storedHash: past.hash }).ok).toBe(
        false,
      );
      const future = issueCapabilityToken({
        key,
        scope,
        id: "run_9",
        expiresAt: new Date(Date.now() + 60_000),
      });
      expect(verifyCapabilityToken(future.token, { key, scope, storedHash: future.hash }).ok).toBe(
        true,
      );
    });

    it("refuses an expiry moved later, or removed, by the holder", () => {
      const [id, , mac] = timed.token.split(".") as [string, string, string];
      const later = String(Date.parse("2099-01-01T00:00:00Z") / 1000);
      for (const token of [`${id}.${later}.${mac}`, `${id}.${mac}`]) {
        expect(
          verifyCapabilityToken(token, {
            ...timedCheck,
            storedHash: hashToken(token),
            now: before,
          }),
        ).toEqual({ ok: false, reason: "invalid" });
      }
    });

    it("never tells an expired token from a forged one to a forger", () => {
      const forged = withMacChanged(timed.token);
      const now = new Date(expiresAt.getTime() + 1000);
      expect(
        verifyCapabilityToken(forged, { ...timedCheck, storedHash: hashToken(forged), now }),
      ).toEqual({ ok: false, reason: "invalid" });
    });
  });
});
