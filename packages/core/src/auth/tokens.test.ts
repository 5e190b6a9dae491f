import { describe, expect, it } from "vitest";
import {
  bearerToken,
  generateToken,
  hashToken,
  issueToken,
  secretsEqual,
  tokenHint,
  tokenMatchesHash,
} from "./tokens.js";

describe("tokens", () => {
  it("generates distinct 256-bit tokens with a purpose prefix", () => {
    const a = generateToken("ct_");
    const b = generateToken("ct_");
    expect(a).toMatch(/^ct_[A-Za-z0-9_-]{43}$/);
    expect(a).not.toBe(b);
  });

  it("stores only a sha256 hash and a 4…4 hint", () => {
    const issued = issueToken("bt_");
    expect(issued.hash).toBe(hashToken(issued.token));
    expect(issued.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(issued.hint).toBe(`${issued.token.slice(0, 4)}…${issued.token.slice(-4)}`);
    expect(issued.hint.length).toBe(9);
    expect(tokenHint("short")).toBe("…");
  });

  it("matches a presented token against its hash and refuses any other", () => {
    const issued = issueToken();
    expect(tokenMatchesHash(issued.token, issued.hash)).toBe(true);
    expect(tokenMatchesHash(`${issued.token}x`, issued.hash)).toBe(false);
    expect(tokenMatchesHash(issued.token.slice(0, -1), issued.hash)).toBe(false);
    expect(tokenMatchesHash(issued.token, "not-hex")).toBe(false);
    expect(tokenMatchesHash("", issued.hash)).toBe(false);
  });

  it("compares secrets exactly", () => {
    expect(secretsEqual("admin-secret-1234", "admin-secret-1234")).toBe(true);
    expect(secretsEqual("admin-secret-1234", "admin-secret-1235")).toBe(false);
    expect(secretsEqual("admin", "admin-secret-1234")).toBe(false);
    expect(secretsEqual("", "x")).toBe(false);
  });

  it("reads a bearer token and nothing else", () => {
    expect(bearerToken(new Headers({ authorization: "Bearer abc" }))).toBe("abc");
    expect(bearerToken(new Headers({ authorization: "bearer abc" }))).toBe("abc");
    expect(bearerToken(new Headers({ authorization: "Basic abc" }))).toBeNull();
    expect(bearerToken(new Headers({ authorization: "Bearer a b" }))).toBeNull();
    expect(bearerToken(new Headers())).toBeNull();
  });
});
