/**
 * Whether the tests run under CI, where a missing service (PostgreSQL, Docker, Chromium) must
 * fail the run instead of skipping suites. Any non-empty `CI` but "false" or "0" counts: CI
 * systems set "true", "1" or their own name, and `.ci/run` keeps an inherited value, so an exact
 * `=== "true"` would let `CI=1` turn a missing engine into "no tests" without a word.
 * @example if (!probe.ok && isCi()) throw new Error("CI but no Docker engine answers");
 */
export function isCi(env: Record<string, string | undefined> = process.env): boolean {
  const value = (env["CI"] ?? "").trim().toLowerCase();
  return value !== "" && value !== "false" && value !== "0";
}
