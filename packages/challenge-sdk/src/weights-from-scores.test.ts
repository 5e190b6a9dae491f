import { describe, expect, it } from "vitest";
import { type ScoreEntry, weightsFromScores } from "./weights-from-scores.js";

describe("weightsFromScores (proportional)", () => {
  it("is {} for no scores", () => {
    expect(weightsFromScores([])).toEqual({});
    expect(weightsFromScores([], { winnerTakesAll: true })).toEqual({});
  });

  it("counts each hotkey's best score once, normalised", () => {
    const scores: ScoreEntry[] = [
      { hotkey: "a", score: 1 },
      { hotkey: "a", score: 3 },
      { hotkey: "b", score: 1 },
      { hotkey: "a", score: 2 },
    ];
    expect(weightsFromScores(scores)).toEqual({ a: 0.75, b: 0.25 });
  });

  it("drops non-finite and non-positive scores, and a hotkey with nothing else", () => {
    const scores: ScoreEntry[] = [
      { hotkey: "a", score: Number.NaN },
      { hotkey: "a", score: 2 },
      { hotkey: "b", score: 0 },
      { hotkey: "c", score: -5 },
      { hotkey: "d", score: Number.POSITIVE_INFINITY },
      { hotkey: "e", score: "7" as unknown as number },
    ];
    expect(weightsFromScores(scores)).toEqual({ a: 1 });
  });

  it("is {} when every score is dropped", () => {
    expect(
      weightsFromScores([
        { hotkey: "a", score: 0 },
        { hotkey: "b", score: Number.NaN },
      ]),
    ).toEqual({});
  });

  it("gives equal best scores equal weight: ties never drop anyone", () => {
    const out = weightsFromScores([
      { hotkey: "a", score: 2, at: "2026-01-02T00:00:00Z" },
      { hotkey: "b", score: 2, at: "2026-01-01T00:00:00Z" },
      { hotkey: "c", score: 4 },
    ]);
    expect(out).toEqual({ a: 0.25, b: 0.25, c: 0.5 });
  });

  it("takes any iterable (a generator, a database result)", () => {
    function* rows() {
      yield { hotkey: "a", score: 1 };
      yield { hotkey: "b", score: 1 };
    }
    expect(weightsFromScores(rows())).toEqual({ a: 0.5, b: 0.5 });
  });

  it("sums to 1 over many hotkeys", () => {
    const scores = Array.from({ length: 1000 }, (_, i) => ({
      hotkey: `h${i}`,
      score: (i % 17) + 0.1,
    }));
    const total = Object.values(weightsFromScores(scores)).reduce((a, b) => a + b, 0);
    expect(total).toBeCloseTo(1, 12);
  });

  it("refuses entries without a hotkey and unparseable times", () => {
    expect(() => weightsFromScores([{ hotkey: "", score: 1 }])).toThrow(TypeError);
    expect(() => weightsFromScores([{ score: 1 } as unknown as ScoreEntry])).toThrow(TypeError);
    expect(() => weightsFromScores([{ hotkey: "a", score: 1, at: "yesterday-ish" }])).toThrow(
      /invalid `at`/,
    );
    expect(() => weightsFromScores([{ hotkey: "a", score: 1, at: new Date(Number.NaN) }])).toThrow(
      TypeError,
    );
  });

  it("refuses a negative or non-finite epsilon", () => {
    expect(() => weightsFromScores([], { epsilon: -1 })).toThrow(RangeError);
    expect(() => weightsFromScores([], { epsilon: Number.NaN })).toThrow(RangeError);
  });
});

describe("weightsFromScores (winnerTakesAll)", () => {
  const wta = (scores: ScoreEntry[], epsilon?: number) =>
    weightsFromScores(scores, {
      winnerTakesAll: true,
      ...(epsilon === undefined ? {} : { epsilon }),
    });

  it("gives 1 to the best score", () => {
    expect(
      wta([
        { hotkey: "a", score: 1 },
        { hotkey: "b", score: 3 },
        { hotkey: "c", score: 2 },
      ]),
    ).toEqual({ b: 1 });
  });

  it("breaks a tie by the earliest `at` (Date or ISO string)", () => {
    const scores: ScoreEntry[] = [
      { hotkey: "late", score: 5, at: new Date("2026-03-02T00:00:00Z") },
      { hotkey: "early", score: 5, at: "2026-03-01T00:00:00Z" },
    ];
    expect(wta(scores)).toEqual({ early: 1 });
    expect(wta([...scores].reverse())).toEqual({ early: 1 });
  });

  it("uses a hotkey's earliest result among its own equal best scores", () => {
    const scores: ScoreEntry[] = [
      { hotkey: "a", score: 5, at: "2026-03-05T00:00:00Z" },
      { hotkey: "b", score: 5, at: "2026-03-02T00:00:00Z" },
      { hotkey: "a", score: 5, at: "2026-03-01T00:00:00Z" },
    ];
    expect(wta(scores)).toEqual({ a: 1 });
  });

  it("ranks a result with a time before one without", () => {
    expect(
      wta([
        { hotkey: "a", score: 5 },
        { hotkey: "b", score: 5, at: "2030-01-01T00:00:00Z" },
      ]),
    ).toEqual({ b: 1 });
  });

  it("breaks a tie left after `at` by the smallest id, then by hotkey", () => {
    const at = "2026-03-01T00:00:00Z";
    expect(
      wta([
        { hotkey: "a", score: 5, at, id: "s2" },
        { hotkey: "b", score: 5, at, id: "s10" },
      ]),
    ).toEqual({ b: 1 });
    expect(
      wta([
        { hotkey: "a", score: 5, at, id: "9" },
        { hotkey: "b", score: 5, at, id: "10" },
      ]),
    ).toEqual({ a: 1 });
    expect(
      wta([
        { hotkey: "a", score: 5, at, id: 12 },
        { hotkey: "b", score: 5, at, id: "011" },
      ]),
    ).toEqual({ b: 1 });
    expect(
      wta([
        { hotkey: "a", score: 5, at },
        { hotkey: "b", score: 5, at, id: "x" },
      ]),
    ).toEqual({ b: 1 });
    expect(
      wta([
        { hotkey: "z", score: 5 },
        { hotkey: "m", score: 5 },
      ]),
    ).toEqual({ m: 1 });
  });

  it("counts scores within epsilon of the top as tied", () => {
    const scores: ScoreEntry[] = [
      { hotkey: "top", score: 1.0005, at: "2026-03-02T00:00:00Z" },
      { hotkey: "first", score: 1.0, at: "2026-03-01T00:00:00Z" },
      { hotkey: "far", score: 0.9, at: "2026-01-01T00:00:00Z" },
    ];
    expect(wta(scores)).toEqual({ top: 1 });
    expect(wta(scores, 0.001)).toEqual({ first: 1 });
    expect(wta(scores, 0.2)).toEqual({ far: 1 });
  });

  it("ignores dropped scores when picking the winner", () => {
    expect(
      wta([
        { hotkey: "a", score: Number.POSITIVE_INFINITY },
        { hotkey: "b", score: 1 },
      ]),
    ).toEqual({ b: 1 });
  });
});
