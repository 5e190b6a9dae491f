/**
 * One review, start to report: the assignment, its artifact (re-hashed), the rules (checked),
 * the static checks, the planned model request bound before any model connection, the optional
 * model opinion, the evidence and the event log, a development quote over all of it, and the
 * report (sent again, identically, while the verifier is away). A failure before the report is
 * recorded with the failure route so the assignment does not sit until it expires.
 */
import { readArchive } from "@platform/challenge-sdk";
import type { ZipFileEntry } from "@platform/challenge-sdk/zip";
import { workloadEvents } from "../attestation/index.js";
import { canonicalDigest, sha256Hex } from "../crypto/index.js";
import type { ReviewAssignmentCore } from "../review/issue-assignment.js";
import {
  buildReviewEnvelope,
  type EvidenceInput,
  type ReviewFindingRecord,
  type ReviewVerdict,
} from "../review/review-envelope.js";
import { AGENT_ARCHIVE } from "../submissions/agent-archive.js";
import { devAttestation } from "../worker/dev-attestation.js";
import { WorkerFailure } from "../worker/worker-failure.js";
import { checkedArtifact, deliverDocument } from "../worker/worker-steps.js";
import {
  callModel,
  ModelUnavailableError,
  newRequestId,
  planModelCall,
  planNoModelCall,
} from "./model-review.js";
import { checksFromRulesBundle, RulesInvalidError } from "./review-rules.js";
import { MAX_FINDINGS, runStaticChecks, stricterVerdict, verdictOf } from "./static-checks.js";
import { type ReviewVmClient, reviewVmClient } from "./vm-client.js";
import { REVIEWER, type WorkerSettings } from "./worker-settings.js";

/** How long the report is sent again while the verifier is away (no answer, 429, 5xx). */
export const REPORT_RETRY_BUDGET_MS = 120_000;

/** The reason codes the worker records with the failure route. */
export type FailureReason =
  | "artifact_mismatch"
  | "rules_invalid"
  | "model_call_refused"
  | "model_unavailable"
  | "report_refused"
  | "worker_error";

export interface RunOptions {
  /** Where each step's line goes (default: stdout). */
  log?: (line: string) => void;
  /** How long the report is sent again while the verifier is away, in milliseconds. */
  reportRetryBudgetMs?: number;
}

/** What the run ended with: a receipted report, or why none was. */
export type RunResult =
  | { receipted: true; verdict: ReviewVerdict; state: string }
  | { receipted: false; reason: FailureReason | "unreachable"; message: string };

const ReviewFailure = WorkerFailure<FailureReason>;

/** Run one review for the assignment of `settings.token`; never throws. */
export async function runReview(
  settings: WorkerSettings,
  options: RunOptions = {},
): Promise<RunResult> {
  const say = (line: string) => (options.log ?? console.log)(`review-worker: ${line}`);
  const client = reviewVmClient(settings.challengeUrl, settings.assignmentId, settings.token);
  say(`assignment ${settings.assignmentId} at ${settings.challengeUrl}`);
  try {
    return await review(settings, client, say, options);
  } catch (error) {
    const failure = WorkerFailure.of<FailureReason>(error);
    say(`failed (${failure.reason}): ${failure.message}`);
    try {
      const recorded = await client.failure(failure.reason, failure.message);
      say(`failure recorded: HTTP ${recorded.status}`);
    } catch (recordError) {
      say(`failure not recorded: ${(recordError as Error).message}`);
      return { receipted: false, reason: "unreachable", message: failure.message };
    }
    return { receipted: false, reason: failure.reason, message: failure.message };
  }
}

async function review(
  settings: WorkerSettings,
  client: ReviewVmClient,
  say: (line: string) => void,
  options: RunOptions,
): Promise<RunResult> {
  const answer = await client.assignment();
  const body = answer.body as {
    assignment?: ReviewAssignmentCore;
    assignment_digest?: string;
    state?: string;
  } | null;
  if (answer.status !== 200 || !body?.assignment || typeof body.assignment_digest !== "string") {
    // 401/410: the token opens nothing any more, so there is no failure to record either.
    say(`the assignment answered HTTP ${answer.status}; nothing to review`);
    return { receipted: false, reason: "unreachable", message: `assignment HTTP ${answer.status}` };
  }
  const core = body.assignment;
  const assignmentDigest = body.assignment_digest;
  if (canonicalDigest(core) !== assignmentDigest) {
    throw new ReviewFailure(
      "worker_error",
      "the assignment's digest is not the digest of its core",
    );
  }
  say(`assignment state ${body.state}, submission ${core.submission_id}, attempt ${core.attempt}`);

  const artifact = await checkedArtifact(client.artifact(), {
    sha256: core.artifact_sha256,
    size: core.artifact_size,
    by: "the assignment's",
  });
  say(`artifact ${artifact.sha256} (${artifact.bytes.length} bytes) matches the assignment`);

  const rules = await client.rules();
  if (rules.status !== 200)
    throw new ReviewFailure("rules_invalid", `the rules route answered HTTP ${rules.status}`);
  let checks: ReturnType<typeof checksFromRulesBundle>;
  try {
    checks = checksFromRulesBundle(rules.body, core.rules_revision_id);
  } catch (error) {
    if (error instanceof RulesInvalidError) throw new ReviewFailure("rules_invalid", error.message);
    throw error;
  }
  say(`rules revision ${core.rules_revision_id}: ${checks.length} static checks`);

  // Read under the rules the submission was accepted under (AGENT_ARCHIVE), so what passes here
  // is what the eval worker can run. An unreadable ZIP (only one stored before those rules
  // could be) is the agent's fault, not the worker's: a blocking finding, then a report.
  const read = await readArchive(artifact.bytes, AGENT_ARCHIVE);
  const files: ZipFileEntry[] = read.ok ? read.value.files : [];
  const findings: ReviewFindingRecord[] = read.ok
    ? runStaticChecks(checks, files)
    : [
        {
          check_id: "artifact-unreadable",
          severity: "block",
          message: read.error.message.slice(0, 1024),
        },
      ];
  const staticVerdict = verdictOf(findings);
  say(
    read.ok
      ? `static checks: ${files.length} files, ${findings.length} findings, verdict ${staticVerdict}`
      : `the agent ZIP is unreadable (${read.error.code}): verdict reject`,
  );

  // Rule 18: the request's exact bytes are bound before any connection to the model.
  const requestId = newRequestId();
  const planned =
    settings.model === null || !read.ok
      ? planNoModelCall(requestId)
      : planModelCall(requestId, settings.model, files, findings);
  const bound = await client.modelCallStarted(planned.record);
  if (bound.status !== 200) {
    throw new ReviewFailure(
      "model_call_refused",
      `model-call-started answered HTTP ${bound.status} ${JSON.stringify(bound.body)?.slice(0, 300)}`,
    );
  }
  say(
    `model call bound: request ${planned.record.request_id}, ${planned.record.provider}/${planned.record.model} at ${planned.record.endpoint_host}, sha256 ${planned.record.request_sha256}`,
  );

  let verdict = staticVerdict;
  let modelVerdict: ReviewVerdict | null = null;
  let responseSha256: string | null = null;
  const evidence: EvidenceInput[] = [];
  if (settings.model !== null && planned.body !== null) {
    let opinion: Awaited<ReturnType<typeof callModel>>;
    try {
      opinion = await callModel(settings.model, planned);
    } catch (error) {
      if (error instanceof ModelUnavailableError)
        throw new ReviewFailure("model_unavailable", error.message);
      throw error;
    }
    modelVerdict = opinion.verdict;
    responseSha256 = opinion.responseSha256;
    verdict = stricterVerdict(staticVerdict, opinion.verdict);
    if (opinion.verdict !== "allow" && findings.length < MAX_FINDINGS) {
      findings.push({
        check_id: "model-review",
        severity: opinion.verdict === "reject" ? "block" : "escalate",
        message: (
          `the model's verdict is ${opinion.verdict}: ${opinion.reasons.join("; ")}` ||
          opinion.verdict
        ).slice(0, 1024),
      });
    }
    evidence.push({
      name: "model-transcript.json",
      mediaType: "application/json",
      bytes: opinion.transcript,
    });
    say(`model verdict ${opinion.verdict}; review verdict ${verdict}`);
  }
  // review-findings.json: every finding, and every file the review read by path, size and sha256.
  const findingsDocument = {
    schema_version: "review-findings/v1",
    verdict,
    static_verdict: staticVerdict,
    model_verdict: modelVerdict,
    findings,
    zip_error: read.ok ? null : read.error,
    files: files.map((file) => ({
      path: file.path,
      size: file.data.length,
      sha256: sha256Hex(file.data),
    })),
  };
  evidence.unshift({
    name: "review-findings.json",
    mediaType: "application/json",
    bytes: Buffer.from(JSON.stringify(findingsDocument), "utf8"),
  });

  // What RTMR3 measures before the quote, in this order: it pins the reviewer, the rules, the
  // artifact and the model request into the quote.
  const eventLog = workloadEvents([
    ["reviewer-version", `${REVIEWER.name}@${REVIEWER.version}`],
    ["rules-revision", core.rules_revision_id],
    ["artifact-sha256", artifact.sha256],
    ["model-request-sha256", planned.record.request_sha256],
  ]);
  const envelope = await buildReviewEnvelope({
    assignment: core,
    assignmentDigest,
    verdict,
    summary: summarize(verdict, findings, modelVerdict).slice(0, 2048),
    findings,
    modelCall: {
      request_id: planned.record.request_id,
      request_sha256: planned.record.request_sha256,
      response_sha256: responseSha256,
    },
    evidence,
    reviewer: REVIEWER,
    reportedAt: new Date().toISOString(),
    ...devAttestation(settings, eventLog),
  });
  say(
    `report built: verdict ${verdict}, review digest ${envelope.review_digest} (development quote)`,
  );
  const state = await deliverDocument(
    (delivery) => client.report(envelope, delivery),
    {
      name: "report",
      again: "the same envelope",
      holder: "assignment",
      refused: "report_refused",
      outcome: true,
    },
    say,
    options.reportRetryBudgetMs ?? REPORT_RETRY_BUDGET_MS,
  );
  return { receipted: true, verdict, state };
}

function summarize(
  verdict: ReviewVerdict,
  findings: readonly ReviewFindingRecord[],
  model: ReviewVerdict | null,
): string {
  const checks = [...new Set(findings.map((finding) => finding.check_id))];
  const found = checks.length === 0 ? "no findings" : `findings: ${checks.join(", ")}`;
  return `${verdict} by ${REVIEWER.name} ${REVIEWER.version}: ${found}; model: ${model ?? "not configured"}`;
}
