// The task and its scoring, as pure functions: no database, no HTTP. Keep yours like this too,
// so the part that decides who earns what is the easiest part to test.

/** One travelling-salesman instance: visit every city once and come back, as short as possible. */
export interface Task {
  /** Names the instance; a submission must name the task it answers. */
  task_id: string;
  /** City coordinates, integers in [0, 1000). A tour is a list of indexes into this array. */
  cities: [number, number][];
}

/** How a valid tour scored. */
export interface TourScore {
  /** Length of the closed tour. */
  length: number;
  /** Length of the tour 0, 1, …, n-1 divided by this tour's length: 1 for that tour, higher is better. */
  score: number;
}

/** mulberry32: a tiny seeded generator, so every replica and every miner derives the same cities. */
function generator(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** The instance for `seed` with `count` cities; the same arguments always give the same task. */
export function makeTask(seed: number, count: number): Task {
  const next = generator(seed);
  const cities: [number, number][] = [];
  for (let i = 0; i < count; i++) {
    cities.push([Math.floor(next() * 1000), Math.floor(next() * 1000)]);
  }
  return { task_id: `tsp-${count}-${seed}`, cities };
}

/**
 * Why `tour` is not a tour of `task` (a message for the miner), or null when it is one: every
 * city exactly once. Scoring trusts nothing a miner sends, so this runs before any arithmetic.
 */
export function tourProblem(task: Task, tour: readonly number[]): string | null {
  const count = task.cities.length;
  if (tour.length !== count)
    return `the tour must visit all ${count} cities, it has ${tour.length}`;
  const seen = new Set<number>();
  for (const city of tour) {
    if (!Number.isInteger(city) || city < 0 || city >= count) {
      return `${city} is not a city of this task (0 to ${count - 1})`;
    }
    if (seen.has(city)) return `city ${city} is visited twice`;
    seen.add(city);
  }
  return null;
}

/** Length of the closed tour (back to its first city). */
export function tourLength(task: Task, tour: readonly number[]): number {
  let length = 0;
  for (let i = 0; i < tour.length; i++) {
    const [x1, y1] = task.cities[tour[i]!]!;
    const [x2, y2] = task.cities[tour[(i + 1) % tour.length]!]!;
    length += Math.hypot(x2 - x1, y2 - y1);
  }
  return length;
}

/** Score a tour that {@link tourProblem} accepted. */
export function scoreTour(task: Task, tour: readonly number[]): TourScore {
  const length = tourLength(task, tour);
  const baseline = tourLength(
    task,
    task.cities.map((_, index) => index),
  );
  return { length, score: length > 0 ? baseline / length : 0 };
}

/** A quick, decent answer: always go to the nearest city not visited yet (what `npm run solve` sends). */
export function nearestNeighbourTour(task: Task): number[] {
  const count = task.cities.length;
  if (count === 0) return [];
  const tour = [0];
  const left = new Set(task.cities.keys());
  left.delete(0);
  while (left.size > 0) {
    const [x, y] = task.cities[tour[tour.length - 1]!]!;
    let best = -1;
    let bestDistance = Number.POSITIVE_INFINITY;
    for (const city of left) {
      const [cx, cy] = task.cities[city]!;
      const distance = Math.hypot(cx - x, cy - y);
      if (distance < bestDistance) {
        best = city;
        bestDistance = distance;
      }
    }
    tour.push(best);
    left.delete(best);
  }
  return tour;
}
