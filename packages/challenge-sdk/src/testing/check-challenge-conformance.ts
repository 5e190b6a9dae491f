import type { Challenge } from "@platform/challenge-sdk";
import type { Backend } from "@platform/core";
import { CONFORMANCE_CHECKS, resolveSubject, startSubject } from "./_conformance-checks.js";

/** A request the conformance suite sends, and which credential it carries. */
export interface ConformanceRequest {
  method: string;
  path: string;
  /** Exact body bytes. */
  body?: string | Uint8Array;
  /** A JSON body (stringified). */
  json?: unknown;
  headers?: Record<string, string>;
  /** Sign it as the test miner; "internal" adds the challenge token; "bridge" a verified miner. */
  as?: "public" | "signed" | "internal" | "bridge";
}

/** What a challenge hands the suite: itself, its environment, and probes it wants used. */
export interface ConformanceSubject<Cfg = unknown> {
  challenge: Challenge<Cfg>;
  /** Extra environment (the author's config variables). */
  env?: Record<string, string | undefined>;
  /** A request that must be answered 422; by default a signed (or internal) JSON route is probed. */
  invalidRequest?: ConformanceRequest;
  /**
   * Requests that must carry a miner's signature, probed like every signed route (unsigned 401,
   * replayed 409, tampered 401): e.g. a route that checks signatures in its own `auth` hook.
   * Their `as` is ignored.
   */
  signedRequests?: readonly ConformanceRequest[];
}

/** Options of `runChallengeConformance` and {@link checkChallengeConformance}. */
export interface ConformanceOptions {
  /** Backends to run on (default ["pglite"]; pass `await testBackends()` for both). */
  backends?: readonly Backend[];
}

/** What the suite takes: a challenge, a subject, or a function making either. */
export type ConformanceInput<Cfg = unknown> =
  | Challenge<Cfg>
  | ConformanceSubject<Cfg>
  | (() =>
      | Challenge<Cfg>
      | ConformanceSubject<Cfg>
      | Promise<Challenge<Cfg> | ConformanceSubject<Cfg>>);

/** The stable name of each check (`start` is the challenge failing to start at all). */
export type ConformanceCheckId =
  | "start"
  | "health"
  | "version"
  | "readiness"
  | "metrics"
  | "openapi"
  | "weights-no-bearer"
  | "weights-wrong-bearer"
  | "weights-slug"
  | "weights-shape"
  | "internal-bearer"
  | "credential-first"
  | "bridge-identity"
  | "validation-422"
  | "signed-unsigned"
  | "signed-replay"
  | "signed-tampered";

/** The verdict of one check on one backend. */
export interface ConformanceCheckResult {
  backend: Backend;
  check: ConformanceCheckId;
  /** The sentence the vitest entry prints for it. */
  title: string;
  status: "passed" | "failed" | "skipped";
  /** Why it failed or was skipped. */
  message?: string;
  /** What a failed check threw. */
  error?: unknown;
}

/** Every check's verdict; `ok` when none failed. */
export interface ConformanceReport {
  ok: boolean;
  results: readonly ConformanceCheckResult[];
}

/**
 * Run the conformance suite and return every check's verdict instead of registering tests:
 * for another test runner, a script, or a test of the suite itself. Each backend gets a fresh
 * database and a fresh start of the challenge; the checks then run in order against it.
 * @example const report = await checkChallengeConformance(challenge); if (!report.ok) console.table(report.results);
 */
export async function checkChallengeConformance<Cfg>(
  input: ConformanceInput<Cfg>,
  options: ConformanceOptions = {},
): Promise<ConformanceReport> {
  const subject = (await resolveSubject(input)) as ConformanceSubject;
  const results: ConformanceCheckResult[] = [];
  for (const backend of options.backends ?? ["pglite"]) {
    let started: Awaited<ReturnType<typeof startSubject>>;
    try {
      started = await startSubject(subject, backend);
    } catch (error) {
      results.push({
        backend,
        check: "start",
        title: "the challenge starts on a fresh test database",
        status: "failed",
        message: error instanceof Error ? error.message : String(error),
        error,
      });
      continue;
    }
    try {
      for (const check of CONFORMANCE_CHECKS) {
        const base = { backend, check: check.id, title: check.title };
        try {
          const outcome = await check.run(started.ctx);
          results.push(
            outcome
              ? { ...base, status: "skipped", message: outcome.skip }
              : { ...base, status: "passed" },
          );
        } catch (error) {
          const message = error instanceof Error ? error.message : String(error);
          results.push({ ...base, status: "failed", message, error });
        }
      }
    } finally {
      await started.close();
    }
  }
  return { ok: results.every((r) => r.status !== "failed"), results };
}
