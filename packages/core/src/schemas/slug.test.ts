import { describe, expect, it } from "vitest";
import { validateValue } from "../http/validation.js";
import { isSlug, SLUG_MAX_LENGTH, SLUG_PATTERN, Slug } from "./slug.js";

const valid = ["ab", "a1", "my-challenge", "a--b", "0x", "a".repeat(SLUG_MAX_LENGTH)];
const invalid = ["", "a", "7", "-", "-ab", "ab-", "Ab", "a_b", "a.b", "a b", "ab\n", "é1"];

describe("the slug rule", () => {
  it("is the spec's pattern", () => {
    expect(SLUG_PATTERN).toBe("^[a-z0-9][a-z0-9-]*[a-z0-9]$");
  });

  it.each(valid)("accepts %j", (slug) => {
    expect(isSlug(slug)).toBe(true);
    expect(validateValue(Slug, slug, "path").ok).toBe(true);
  });

  it.each([...invalid, "a".repeat(SLUG_MAX_LENGTH + 1)])("refuses %j", (slug) => {
    expect(isSlug(slug)).toBe(false);
    expect(validateValue(Slug, slug, "path").ok).toBe(false);
  });

  it("refuses what is not a string", () => {
    for (const value of [undefined, null, 12, ["ab"], { slug: "ab" }]) {
      expect(isSlug(value)).toBe(false);
    }
  });
});
