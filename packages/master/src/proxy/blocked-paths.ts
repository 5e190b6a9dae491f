/**
 * First segments (below the challenge root) that are private with everything under them:
 * service probes, the challenge's internal API, and benchmark executions.
 */
export const BLOCKED_ROOTS: ReadonlySet<string> = new Set([
  "health",
  "version",
  "internal",
  "benchmark-executions",
  "benchmark_executions",
]);

/** Actions that start work when they end a path under `benchmark` or `benchmarks`. */
export const BLOCKED_BENCHMARK_ACTIONS: ReadonlySet<string> = new Set(["run", "execute", "launch"]);

const BENCHMARK_PARENTS: ReadonlySet<string> = new Set(["benchmark", "benchmarks"]);

/**
 * Is a path below a challenge root private? `segments` are the judged keys from
 * `parseProxyTarget` (decoded, dot segments resolved, folded to lower case). Blocked:
 * `/health`, `/version`, `/internal`, `/benchmark-executions` and anything below each, a
 * `benchmark-executions` segment anywhere, and a trailing run, execute or launch with a
 * `benchmark` or `benchmarks` segment above it (`/benchmarks/x/run`, `/v1/benchmark/launch`).
 */
export function isBlockedPath(segments: readonly string[]): boolean {
  const [first] = segments;
  if (first === undefined) return false;
  if (BLOCKED_ROOTS.has(first)) return true;
  if (
    segments.some(
      (segment) => segment === "benchmark-executions" || segment === "benchmark_executions",
    )
  )
    return true;
  const last = segments[segments.length - 1]!;
  return (
    BLOCKED_BENCHMARK_ACTIONS.has(last) &&
    segments.slice(0, -1).some((segment) => BENCHMARK_PARENTS.has(segment))
  );
}
