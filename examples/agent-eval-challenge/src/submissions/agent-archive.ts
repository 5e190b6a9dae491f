/**
 * The agent ZIP's one rule set, read by everyone who opens it: the submission route (the SDK
 * checks it there, before the handler), the review worker and the eval worker. Before this,
 * each had its own limits (a format check at submission, 500 files / 16 MiB in review, 250 files
 * / 12 MiB in evaluation), so an agent could pass review and then be refused at evaluation. The
 * limits are the eval worker's, the strictest reader: they leave the task runner (256 files,
 * 16 MiB) room for the harness and the task input.
 */
import type { SubmissionArchive } from "@platform/challenge-sdk";

/** Largest agent ZIP, in bytes, as uploaded (1 MiB). */
export const MAX_ARTIFACT_BYTES = 1024 * 1024;

// A file name as the master forwards it: a plain name, no path.
const FILENAME = /^[A-Za-z0-9][A-Za-z0-9._ -]{0,254}$/;

/** The agent ZIP: `artifact_b64` of SubmissionRequest, or the bridge's raw application/zip. */
export const AGENT_ARCHIVE: SubmissionArchive = Object.freeze({
  field: "artifact_b64",
  maxBytes: MAX_ARTIFACT_BYTES,
  noun: "agent ZIP",
  filename: FILENAME,
  limits: Object.freeze({ maxFiles: 250, maxUnpackedBytes: 12 * 1024 * 1024 }),
  // The interface's names for the two refusals it had before the SDK read the whole ZIP.
  codes: Object.freeze({
    archive_too_large: "artifact_too_large",
    invalid_zip: "invalid_artifact",
  }),
});
