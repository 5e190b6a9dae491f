// The order vitest starts test files in: longest first, by the durations a full run recorded in
// scripts/test-durations.json (`npm run test:slowest -- --record`). Vitest's own order groups
// files by project name and, on a fresh clone with no cache, by file size, so a 100 s file of
// the last project started near the end and the suite waited on it alone; longest-first keeps
// every worker busy until the short files fill the tail (docs/decisions.md, "Where the suite's
// time goes"). A file the record does not know yet is taken as a typical one (the median).
import { existsSync, readFileSync } from "node:fs";
import { relative } from "node:path";
import { fileURLToPath } from "node:url";
import { BaseSequencer, type TestSpecification } from "vitest/node";

const root = fileURLToPath(new URL("..", import.meta.url));
const record = fileURLToPath(new URL("./test-durations.json", import.meta.url));

/** Seconds per repository-relative test file, as recorded; empty when there is no record. */
export function recordedDurations(): Map<string, number> {
  if (!existsSync(record)) return new Map();
  const parsed = JSON.parse(readFileSync(record, "utf8")) as Record<string, unknown>;
  return new Map(
    Object.entries(parsed).filter(
      (entry): entry is [string, number] => typeof entry[1] === "number",
    ),
  );
}

/**
 * Files at least this long (recorded seconds) start first, longest first; the rest follow by
 * project. Files of a project share their worker's modules (`isolate: false`, vitest.config.ts),
 * but a worker serves one project at a time: short files interleaved across projects would each
 * start a new worker and import the packages again, which is most of a short file's cost.
 */
const LONG_FILE_SECONDS = 8;

/**
 * `files` in a random order fixed by `seed` (a linear congruential generator: the same seed, the
 * same order). For `TEST_SHUFFLE_SEED`: files share their worker's modules, so a file that
 * passes only after, or only without, another is found by running the suite in other orders.
 */
export function shuffled<T>(files: readonly T[], seed: number): T[] {
  let state = Math.abs(Math.trunc(seed)) % 2 ** 31;
  const next = () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
  const out = [...files];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

export class DurationSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const seed = process.env["TEST_SHUFFLE_SEED"];
    if (seed) {
      if (!/^\d+$/.test(seed))
        throw new Error(`TEST_SHUFFLE_SEED must be a whole number, not ${seed}`);
      return shuffled(files, Number(seed));
    }
    const durations = recordedDurations();
    const known = [...durations.values()].sort((a, b) => a - b);
    const typical = known.length > 0 ? known[Math.floor(known.length / 2)]! : 0;
    const seconds = (file: TestSpecification) =>
      durations.get(relative(root, file.moduleId).split("\\").join("/")) ?? typical;
    const projectSeconds = new Map<string, number>();
    for (const file of files) {
      const name = file.project.name;
      projectSeconds.set(name, (projectSeconds.get(name) ?? 0) + seconds(file));
    }
    const long = (file: TestSpecification) => (seconds(file) >= LONG_FILE_SECONDS ? 1 : 0);
    const ofProject = (file: TestSpecification) => projectSeconds.get(file.project.name)!;
    // A project's `sequence.groupOrder` still comes first, as in vitest's own order. Then the
    // long files, longest first; then each project's short files together (the projects with
    // the most time first), longest first within.
    return [...files].sort(
      (a, b) =>
        a.project.config.sequence.groupOrder - b.project.config.sequence.groupOrder ||
        long(b) - long(a) ||
        (long(a)
          ? 0
          : ofProject(b) - ofProject(a) || a.project.name.localeCompare(b.project.name)) ||
        seconds(b) - seconds(a) ||
        a.moduleId.localeCompare(b.moduleId),
    );
  }
}
