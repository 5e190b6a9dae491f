/**
 * Submissions in the database: the insert that stores one (with its count against the hotkey's
 * submission window and its first status event, in one transaction: none exists without the
 * others) and the reads of the submission routes. Rule 1: storing starts nothing.
 */
import {
  acceptWithinLimit,
  HttpError,
  type Sql,
  type TransactionSql,
} from "@platform/challenge-sdk";
import {
  publicSubmissionStatus,
  recordSubmissionReceived,
  type SubmissionState,
} from "../state/index.js";

/** The count of a hotkey's accepted submissions (migration 0008 carried the old windows into it). */
const SUBMISSION_BUCKET = "agent-eval submissions";

/** What the SubmissionResponse and SubmissionListItem records are built from. */
interface SubmissionRow {
  id: string;
  hotkey: string;
  name: string;
  filename: string;
  artifact_sha256: string;
  size: number;
  state: SubmissionState;
  created_at: Date;
  updated_at: Date;
  version: number;
  latest: boolean;
  run_id: string | null;
  run_state: string | null;
  run_score: number | null;
  run_updated_at: Date | null;
}

/** A new submission as the route checked it. */
export interface NewSubmission {
  hotkey: string;
  name: string;
  filename: string;
  via: "signed" | "bridge";
  artifact: Buffer;
  sha256: string;
  /** One accepted submission per hotkey per this many seconds; 0: no window. */
  windowSeconds: number;
}

/**
 * Store `input` and answer its record: 409 `duplicate_artifact` when the same ZIP bytes were
 * submitted before (by anyone), 429 `submission_rate_limited` with `next_allowed_at` inside the
 * hotkey's window. Both are decided by the database (a unique hash, the SDK's count row locked
 * by this transaction), so two concurrent requests cannot both pass, and a refused one (409, or
 * any failure before commit) leaves the hotkey's window as it was.
 */
export async function storeSubmission(sql: Sql, input: NewSubmission) {
  const id = await sql.begin(async (tx) => {
    const [duplicate] = await tx<{ id: string }[]>`
      select id from submissions where artifact_sha256 = ${input.sha256}`;
    if (duplicate) throw duplicateArtifact(duplicate.id);
    const [row] = await tx<{ id: string }[]>`
      insert into submissions (hotkey, name, filename, artifact, artifact_sha256, size, via)
      values (${input.hotkey}, ${input.name}, ${input.filename}, ${input.artifact},
              ${input.sha256}, ${input.artifact.length}, ${input.via})
      on conflict (artifact_sha256) do nothing
      returning id`;
    // A concurrent request stored the same bytes between the check and the insert.
    if (!row) throw duplicateArtifact(null);
    if (input.windowSeconds > 0) {
      await acceptWithinLimit(tx, {
        bucket: SUBMISSION_BUCKET,
        key: input.hotkey,
        limit: 1,
        windowSeconds: input.windowSeconds,
        code: "submission_rate_limited",
      });
    }
    await recordSubmissionReceived(tx, row.id, "miner");
    return row.id;
  });
  const [stored] = await sql<SubmissionRow[]>`${selectSubmissions(sql)} where s.id = ${id}`;
  return submissionResponse(stored!);
}

function duplicateArtifact(existing: string | null): HttpError {
  return new HttpError(
    409,
    "duplicate_artifact",
    existing
      ? `the same artifact (by sha256) was already submitted as submission ${existing}`
      : "the same artifact (by sha256) was already submitted",
  );
}

// The submission, its number among the hotkey's submissions of that name, and its latest run.
const selectSubmissions = (sql: Sql | TransactionSql) => sql`
  select s.id, s.hotkey, s.name, s.filename, s.artifact_sha256, s.size, s.state, s.created_at,
         s.updated_at,
         (select count(*)::int from submissions f
            where f.hotkey = s.hotkey and f.name = s.name and f.id <= s.id) as version,
         not exists (select 1 from submissions f
            where f.hotkey = s.hotkey and f.name = s.name and f.id > s.id) as latest,
         r.id as run_id, r.state as run_state, r.score as run_score, r.updated_at as run_updated_at
  from submissions s
  left join lateral (
    select id, state, score, updated_at from eval_runs
    where submission_id = s.id order by run_number desc limit 1
  ) r on true`;

/** Recent submissions (newest first), optionally one hotkey's, each with its latest score. */
export async function listSubmissions(sql: Sql, options: { limit: number; hotkey?: string }) {
  const rows = await sql<SubmissionRow[]>`
    ${selectSubmissions(sql)}
    ${options.hotkey === undefined ? sql`` : sql`where s.hotkey = ${options.hotkey}`}
    order by s.created_at desc, s.id desc
    limit ${options.limit}`;
  return rows.map((row) => ({
    id: Number(row.id),
    hotkey: row.hotkey,
    name: row.name,
    artifact_sha256: row.artifact_sha256,
    status: row.state,
    effective_status: publicSubmissionStatus(row.state),
    // The latest accepted score only: a run in flight has none yet.
    latest_score: row.run_state === "accepted" ? row.run_score : null,
    created_at: row.created_at.toISOString(),
  }));
}

function submissionResponse(row: SubmissionRow) {
  return {
    id: Number(row.id),
    hotkey: row.hotkey,
    name: row.name,
    filename: row.filename,
    artifact_sha256: row.artifact_sha256,
    size: row.size,
    version: row.version,
    latest: row.latest,
    status: row.state,
    effective_status: publicSubmissionStatus(row.state),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    latest_evaluation:
      row.run_id === null
        ? null
        : {
            eval_run_id: row.run_id,
            status: row.run_state!,
            score: row.run_state === "accepted" ? row.run_score : null,
            updated_at: row.run_updated_at!.toISOString(),
          },
  };
}
