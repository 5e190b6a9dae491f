import { describe, expect, it } from "vitest";
import {
  currentEpoch,
  DEFAULT_EPOCH_SECONDS,
  epochBounds,
  epochIdAt,
  recentEpochs,
} from "./epochs.js";

describe("epochs", () => {
  it("numbers epochs floor(unix seconds / EPOCH_SECONDS), six hours by default", () => {
    expect(DEFAULT_EPOCH_SECONDS).toBe(21_600);
    const at = new Date("2026-03-01T05:59:59.999Z");
    const seconds = Date.parse("2026-03-01T05:59:59Z") / 1000;
    expect(epochIdAt(at)).toBe(Math.floor(seconds / 21_600));
    expect(epochIdAt(new Date("2026-03-01T06:00:00.000Z"))).toBe(epochIdAt(at) + 1);
    expect(epochIdAt(new Date(0))).toBe(0);
    expect(currentEpoch(at, 3600)).toEqual({
      epoch_id: Math.floor(seconds / 3600),
      epoch_seconds: 3600,
    });
  });

  it("bounds an epoch by its start and the next one's start", () => {
    const id = epochIdAt(new Date("2026-03-01T07:30:00Z"));
    const { startsAt, endsAt } = epochBounds(id);
    expect(startsAt.toISOString()).toBe("2026-03-01T06:00:00.000Z");
    expect(endsAt.toISOString()).toBe("2026-03-01T12:00:00.000Z");
    expect(epochIdAt(startsAt)).toBe(id);
    expect(epochIdAt(new Date(endsAt.getTime() - 1))).toBe(id);
  });

  it("lists recent epochs newest first, the first one current", () => {
    const now = new Date("2026-03-01T07:30:00Z");
    const list = recentEpochs(now, DEFAULT_EPOCH_SECONDS, 3);
    const id = epochIdAt(now);
    expect(list).toEqual([
      {
        id,
        starts_at: "2026-03-01T06:00:00.000Z",
        ends_at: "2026-03-01T12:00:00.000Z",
        status: "current",
      },
      {
        id: id - 1,
        starts_at: "2026-03-01T00:00:00.000Z",
        ends_at: "2026-03-01T06:00:00.000Z",
        status: "closed",
      },
      {
        id: id - 2,
        starts_at: "2026-02-28T18:00:00.000Z",
        ends_at: "2026-03-01T00:00:00.000Z",
        status: "closed",
      },
    ]);
    expect(recentEpochs(now)).toHaveLength(50);
    expect(recentEpochs(now, DEFAULT_EPOCH_SECONDS, 500)).toHaveLength(50);
    expect(recentEpochs(now, DEFAULT_EPOCH_SECONDS, 0)).toHaveLength(1);
    // Near the Unix epoch there are only so many.
    expect(recentEpochs(new Date(30_000_000), 21_600, 50).map((e) => e.id)).toEqual([1, 0]);
  });

  it("refuses an epoch length that is not a positive whole number", () => {
    expect(() => epochIdAt(new Date(), 0)).toThrow(/EPOCH_SECONDS must be a whole number/);
    expect(() => currentEpoch(new Date(), 1.5)).toThrow(RangeError);
  });
});
