/**
 * POST /v1/submissions (signed by the miner: JSON `{filename, code, metadata}`) and its bridge,
 * POST /internal/v1/bridge/submissions (the master's verified upload: the same JSON, or the raw
 * ZIP as application/zip). One declaration, one handler: the hotkey is only ever the one the
 * SDK verified (the miner's signature, or the master's X-Platform-Verified-Hotkey; a miner's
 * own X-Hotkey is never read on the bridge), and on the bridge the file name comes from the
 * master's X-Submission-Filename. Both answer 201 with the status record.
 */
import { type ChallengeRouter, json } from "@platform/challenge-sdk";
import { acceptSubmission, SUBMISSION_BODY_LIMIT } from "../accept-submission.js";
import { SubmissionCreate, SubmissionStatus } from "../api-schemas.js";
import { BUNDLE_ARCHIVE } from "../bundle/index.js";
import type { ScoringState } from "../scoring-state.js";
import type { Settings } from "../settings.js";

/** Register the submission routes. */
export function submissionRoutes(router: ChallengeRouter<Settings, ScoringState>): void {
  router.submission({
    path: "/v1/submissions",
    bridgePath: "/internal/v1/bridge/submissions",
    summary: "Submit a bundle (a ZIP of architecture.py and training.py)",
    description:
      "Signed by the miner with a JSON body {filename, code: base64 ZIP, metadata}; or through " +
      "the master (`platform submit`), which forwards the raw ZIP with the verified hotkey and " +
      "X-Submission-Filename. Structural problems answer 4xx now; gates and scoring run later " +
      "and end as the submission's status.",
    tags: ["submissions"],
    body: SubmissionCreate,
    raw: ["application/zip"],
    archive: BUNDLE_ARCHIVE,
    bodyLimit: SUBMISSION_BODY_LIMIT,
    responses: { 201: { description: "Accepted: pending", schema: SubmissionStatus } },
    handler: async (ctx) => {
      const { miner, state, sql } = ctx;
      // The bridge's file name is the master's word (BUNDLE_ARCHIVE's rule, checked by the SDK);
      // a signed request names its bundle itself (SubmissionCreate's pattern).
      const filename = ctx.filename ?? ctx.body?.filename ?? "bundle.zip";
      const status = await acceptSubmission(
        {
          sql,
          queue: state.queue,
          epochSeconds: state.options.epochSeconds,
          llmGate: state.options.llm.mode,
        },
        {
          hotkey: miner.hotkey,
          via: miner.via,
          requestHash: miner.requestHash,
          filename,
          archive: ctx.archive,
          metadata: ctx.body?.metadata ?? {},
        },
      );
      ctx.log.info("submission accepted", {
        submission_id: status.id,
        hotkey: miner.hotkey,
        via: miner.via,
        code_hash: status.code_hash,
      });
      return json(status, { status: 201 });
    },
  });
}
