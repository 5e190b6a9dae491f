import { HttpError } from "@platform/core";
import { describe, expect, it } from "vitest";
import { encodeSegment, parseProxyTarget } from "./proxy-path.js";

function refusal(target: string): { status: number; code: string } {
  try {
    parseProxyTarget(target);
  } catch (error) {
    if (error instanceof HttpError) return { status: error.status, code: error.code };
    throw error;
  }
  throw new Error(`${target} was accepted`);
}

describe("parseProxyTarget", () => {
  it.each([
    ["/challenges/live", "/", ""],
    ["/challenges/live/", "/", ""],
    ["/challenges/live/a/b", "/a/b", ""],
    ["/challenges/live/a/b/", "/a/b/", ""],
    ["/challenges/live//a///b//", "/a/b/", ""],
    ["/challenges/live/a/./b/../c", "/a/c", ""],
    ["/challenges/live/a/b/..", "/a/", ""],
    ["/challenges/live/a/.", "/a/", ""],
    ["/challenges/live/../../../a", "/a", ""],
    ["/challenges/live/%2e%2e/%2E%2E/a", "/a", ""],
    ["/challenges/live/a%2fb", "/a/b", ""],
    ["/challenges/live/a%5cb\\c", "/a/b/c", ""],
    ["/challenges/live/%2561", "/a", ""],
    ["/challenges/live/caf%C3%A9", "/caf%C3%A9", ""],
    ["/challenges/live/caf\u00c3\u00a9", "/caf%C3%A9", ""], // raw UTF-8 as node hands it over (latin1)
    ["/challenges/live/a%20b", "/a%20b", ""],
    ["/challenges/live/a%3Fb%23c", "/a%3Fb%23c", ""],
    ["/challenges/live/a;b=c/d", "/a;b=c/d", ""],
    ["/challenges/live/a/..;x/b", "/b", ""],
    ["/challenges/live/100%zz", "/100%25zz", ""],
    ["/challenges/live/x?b=2&a=%2e%2e/&empty", "/x", "?b=2&a=%2e%2e/&empty"],
    ["/challenges/live?q=1", "/", "?q=1"],
    ["/challenges/live/x#frag?no", "/x", ""],
    ["/challenges/%6cive/x", "/x", ""],
    ["/challenges\\live\\x", "/x", ""],
  ])("%s -> %s", (target, path, query) => {
    const parsed = parseProxyTarget(target);
    expect(parsed.slug).toBe("live");
    expect(parsed.path).toBe(path);
    expect(parsed.query).toBe(query);
  });

  it("never lets .. climb into another challenge", () => {
    const parsed = parseProxyTarget("/challenges/live/..%2f..%2fother/internal");
    expect(parsed.slug).toBe("live");
    expect(parsed.path).toBe("/other/internal");
  });

  it("judges folded segments: case, params, trailing dots, compatibility forms", () => {
    expect(parseProxyTarget("/challenges/live/HeAlTh;x=1/Ｉｎｔｅｒｎａｌ./a").segments).toEqual([
      "health",
      "internal",
      "a",
    ]);
  });

  it.each([
    ["/challenges/live/%00", 400, "invalid_path"],
    ["/challenges/live/a%0d%0aX-Evil:1", 400, "invalid_path"],
    ["/challenges/live/\u0001", 400, "invalid_path"],
    ["/challenges/live/%c2%85", 400, "invalid_path"],
    ["/challenges/live/%ff", 400, "invalid_path"],
    [`/challenges/live/${"%25".repeat(1)}${"25".repeat(12)}41`, 400, "invalid_path"],
    ["/other/live/x", 400, "invalid_path"],
    ["/challenges", 400, "invalid_path"],
    ["relative", 400, "invalid_path"],
    ["/challenges/Live/x", 404, "challenge_not_found"],
    ["/challenges/live;x/health", 404, "challenge_not_found"],
    ["/challenges/-x/health", 404, "challenge_not_found"],
    // One character is not a slug (the spec's rule needs two), so it is refused before any lookup.
    ["/challenges/a/x", 404, "challenge_not_found"],
    ["/challenges/7", 404, "challenge_not_found"],
  ])("refuses %s with %i %s", (target, status, code) => {
    expect(refusal(target)).toEqual({ status, code });
  });

  it("decodes at most a bounded number of times", () => {
    // 8 layers of encoding still decode; the point is only that a pathological input stops.
    let spelled = "a";
    for (let i = 0; i < 8; i++) spelled = spelled.replaceAll("%", "%25").replace("a", "%61");
    expect(parseProxyTarget(`/challenges/live/${spelled}`).path).toBe("/a");
  });
});

describe("encodeSegment", () => {
  it("keeps pchar and encodes the rest as UTF-8", () => {
    expect(encodeSegment("a-b_c.d~e!$&'()*+,;=:@")).toBe("a-b_c.d~e!$&'()*+,;=:@");
    expect(encodeSegment("a b/c?d#e%f")).toBe("a%20b%2Fc%3Fd%23e%25f");
    expect(encodeSegment("é€😀")).toBe("%C3%A9%E2%82%AC%F0%9F%98%80");
  });
});
