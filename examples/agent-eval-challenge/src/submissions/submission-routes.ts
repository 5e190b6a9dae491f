/**
 * POST /submissions (signed by the miner: JSON SubmissionRequest) and its bridge, POST
 * /internal/v1/bridge/submissions (the master's verified upload: the raw ZIP, or the same JSON),
 * both 201 SubmissionResponse; GET /submissions, the recent ones with their latest score. The
 * hotkey is only ever the one the SDK verified (the miner's signature or the master's verified
 * headers); on the bridge the file name is only the master's X-Submission-Filename.
 */
import { type ChallengeRouter, json, Type } from "@platform/challenge-sdk";
import type { AgentEvalState } from "../agent-eval-state.js";
import type { Settings } from "../settings.js";
import { AGENT_ARCHIVE } from "./agent-archive.js";
import {
  RateLimitedResponse,
  SubmissionListItem,
  SubmissionListQuery,
  SubmissionRequest,
  SubmissionResponse,
} from "./submission-schemas.js";
import { listSubmissions, storeSubmission } from "./submission-store.js";

// The base64 of the largest agent ZIP, plus room for the rest of the JSON.
const BODY_LIMIT = Math.ceil(AGENT_ARCHIVE.maxBytes / 3) * 4 + 16 * 1024;

/** Register the submission routes. */
export function submissionRoutes(router: ChallengeRouter<Settings, AgentEvalState>): void {
  router.submission({
    path: "/submissions",
    bridgePath: "/internal/v1/bridge/submissions",
    summary: "Submit an agent (a ZIP of at most 1 MiB); nothing starts until the miner asks",
    description:
      "Signed by the miner with a JSON SubmissionRequest; or through the master (`platform " +
      "submit`), which forwards the raw ZIP with the verified hotkey and X-Submission-Filename. " +
      "The server hashes the ZIP bytes itself. One accepted submission per hotkey per window " +
      "(429 with next_allowed_at); the same ZIP twice is 409.",
    tags: ["submissions"],
    body: SubmissionRequest,
    raw: ["application/zip"],
    archive: AGENT_ARCHIVE,
    bodyLimit: BODY_LIMIT,
    responses: {
      201: { description: "Stored, state received", schema: SubmissionResponse },
      429: { description: "The hotkey's window is not over", schema: RateLimitedResponse },
    },
    handler: async (ctx) => {
      // The SDK has checked the archive (AGENT_ARCHIVE) and the bridge's file name by now.
      const { miner, sql, state, archive } = ctx;
      const filename = ctx.filename ?? "agent.zip";
      const name = ctx.body?.name ?? nameFromFilename(filename);
      const stored = await storeSubmission(sql, {
        hotkey: miner.hotkey,
        name,
        filename,
        via: miner.via,
        artifact: archive.bytes,
        sha256: archive.sha256,
        windowSeconds: state.options.submissionWindowSeconds,
      });
      ctx.log.info("submission stored", {
        submission_id: stored.id,
        hotkey: miner.hotkey,
        via: miner.via,
        artifact_sha256: stored.artifact_sha256,
      });
      return json(stored, { status: 201 });
    },
  });

  router.public({
    method: "GET",
    path: "/submissions",
    summary: "Recent submissions, newest first, each with its latest score",
    tags: ["submissions"],
    query: SubmissionListQuery,
    responses: {
      200: { description: "Recent submissions", schema: Type.Array(SubmissionListItem) },
    },
    handler: ({ sql, query }) =>
      listSubmissions(sql, {
        limit: query.limit ?? 50,
        ...(query.hotkey === undefined ? {} : { hotkey: query.hotkey }),
      }),
  });
}

/** A bridged upload's display name: its file name without the extension, at most 128 characters. */
function nameFromFilename(filename: string): string {
  return (filename.replace(/\.zip$/i, "") || filename).slice(0, 128);
}
