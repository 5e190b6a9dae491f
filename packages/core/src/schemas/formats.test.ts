import { describe, expect, it } from "vitest";
import { validateValue } from "../http/validation.js";
import { WeightsSnapshot } from "./weights.js";

describe("string formats", () => {
  const snapshot = {
    id: 1,
    computed_at: "2026-11-21T10:00:00.000Z",
    uids: [0],
    weights: [1],
    weights_u16: [65535],
    hotkeys: {},
    burned: true,
    sources: [],
  };

  it("accepts RFC 3339 date-times and refuses anything else", () => {
    expect(validateValue(WeightsSnapshot, snapshot, "body").ok).toBe(true);
    expect(
      validateValue(
        WeightsSnapshot,
        { ...snapshot, computed_at: "2026-11-21T10:00:00+02:00" },
        "body",
      ).ok,
    ).toBe(true);
    for (const bad of ["yesterday", "2026-13-45T99:00:00Z", "2026-11-21"]) {
      expect(validateValue(WeightsSnapshot, { ...snapshot, computed_at: bad }, "body").ok).toBe(
        false,
      );
    }
  });
});
