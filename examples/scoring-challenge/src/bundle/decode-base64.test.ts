import { describe, expect, it } from "vitest";
import { decodeBase64Bundle, MAX_BASE64_CHARS } from "./decode-base64.js";

describe("decodeBase64Bundle", () => {
  it("decodes canonical base64", () => {
    const bytes = Buffer.from([0x50, 0x4b, 0x03, 0x04, 0xff, 0x00, 0x10]);
    expect(decodeBase64Bundle(bytes.toString("base64"))).toEqual({ ok: true, value: bytes });
  });

  it.each([
    ["UEsDBA=!", "invalid_base64", /"!" at position 7/],
    ["UEsDBA==\n", "invalid_base64", /"\\n" at position 8/],
    ["UEsDB", "invalid_base64", /multiple of 4/],
    ["UE=sDBA=", "invalid_base64", /final padding/],
    ["U===", "invalid_base64", /final padding/],
    ["", "invalid_base64", /empty/],
    ["UEsD-A__", "invalid_base64", /"-" at position 4/],
  ])("refuses %j with %s", (code, expected, message) => {
    const result = decodeBase64Bundle(code);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error).toMatchObject({ code: expected, status: 400 });
    expect(result.error.message).toMatch(message);
  });

  it("refuses a string over the limit with 413 before looking at its characters", () => {
    const result = decodeBase64Bundle("!".repeat(MAX_BASE64_CHARS + 1));
    expect(result).toMatchObject({ ok: false, error: { code: "bundle_too_large", status: 413 } });
    if (!result.ok) expect(result.error.message).toContain("7.5 MiB");
    // Exactly at the limit is fine.
    const edge = decodeBase64Bundle("A".repeat(MAX_BASE64_CHARS));
    expect(edge.ok).toBe(true);
  });
});
