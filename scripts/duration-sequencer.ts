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

export class DurationSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const durations = recordedDurations();
    const known = [...durations.values()].sort((a, b) => a - b);
    const typical = known.length > 0 ? known[Math.floor(known.length / 2)]! : 0;
    const seconds = (file: TestSpecification) =>
      durations.get(relative(root, file.moduleId).split("\\").join("/")) ?? typical;
    // A project's `sequence.groupOrder` still comes first, as in vitest's own order.
    return [...files].sort(
      (a, b) =>
        a.project.config.sequence.groupOrder - b.project.config.sequence.groupOrder ||
        seconds(b) - seconds(a) ||
        a.moduleId.localeCompare(b.moduleId),
    );
  }
}
