import { describe, expect, it } from "vitest";
import { makeTask, nearestNeighbourTour, scoreTour, tourLength, tourProblem } from "../src/task.js";

describe("the task", () => {
  it("is the same for the same seed and count, and different for another seed", () => {
    expect(makeTask(7, 10)).toEqual(makeTask(7, 10));
    expect(makeTask(7, 10).cities).not.toEqual(makeTask(8, 10).cities);
    const task = makeTask(7, 10);
    expect(task.task_id).toBe("tsp-10-7");
    expect(task.cities).toHaveLength(10);
    for (const [x, y] of task.cities) {
      expect(Number.isInteger(x) && x >= 0 && x < 1000).toBe(true);
      expect(Number.isInteger(y) && y >= 0 && y < 1000).toBe(true);
    }
  });

  it("accepts only tours that visit every city exactly once", () => {
    const task = makeTask(1, 5);
    expect(tourProblem(task, [4, 2, 0, 1, 3])).toBeNull();
    expect(tourProblem(task, [0, 1, 2, 3])).toMatch(/all 5 cities/);
    expect(tourProblem(task, [0, 1, 2, 3, 3])).toMatch(/visited twice/);
    expect(tourProblem(task, [0, 1, 2, 3, 5])).toMatch(/not a city/);
    expect(tourProblem(task, [0, 1, 2, 3, -1])).toMatch(/not a city/);
    expect(tourProblem(task, [0, 1, 2, 3, 1.5])).toMatch(/not a city/);
  });

  it("measures the closed tour, back to its first city", () => {
    const square = {
      task_id: "square",
      cities: [
        [0, 0],
        [0, 3],
        [4, 3],
        [4, 0],
      ] as [number, number][],
    };
    expect(tourLength(square, [0, 1, 2, 3])).toBe(14);
    expect(tourLength(square, [0, 2, 1, 3])).toBe(18);
  });

  it("scores 1 for the tour in index order, more for a shorter tour, less for a longer one", () => {
    const square = {
      task_id: "square",
      cities: [
        [0, 0],
        [4, 3],
        [0, 3],
        [4, 0],
      ] as [number, number][],
    };
    expect(scoreTour(square, [0, 1, 2, 3]).score).toBe(1);
    expect(scoreTour(square, [0, 2, 1, 3]).score).toBeCloseTo(18 / 14, 12);
    expect(scoreTour(square, [0, 2, 1, 3]).length).toBe(14);
  });

  it("nearest neighbour gives a valid tour that beats index order on a random instance", () => {
    const task = makeTask(2024, 40);
    const tour = nearestNeighbourTour(task);
    expect(tourProblem(task, tour)).toBeNull();
    expect(scoreTour(task, tour).score).toBeGreaterThan(1);
  });
});
