/**
 * The miner env of a submission and its launch, each in one transaction holding the submission
 * row (`lockOwnedSubmission`: the submission's own hotkey only, 404/403 otherwise):
 * - PUT replaces the whole set: checked (env-rules.ts), sealed under the env key with the
 *   submission and the new revision as associated data, stored with its metadata;
 * - confirm-empty records an explicit "no env" (a new revision too);
 * - launch records the miner's go-ahead once and locks the env for good (412 before the env is
 *   set or confirmed empty; a repeat answers the recorded launch);
 * - GET shows the metadata: names, sizes and sha256 of the values, never a value.
 * The values are opened only for the evaluation (`openMinerEnv`).
 */
import { HttpError, type Sql, type Static, type TransactionSql } from "@platform/challenge-sdk";
import { deriveKey, KeyLabel, open, seal, sha256Hex } from "../crypto/index.js";
import { lockOwnedSubmission } from "../review/index.js";
import { checkEnv, ENV_ERROR_CODES } from "./env-rules.js";
import type { MinerEnvLaunchResponse, MinerEnvMetadataResponse } from "./env-schemas.js";

export type MinerEnvMetadata = Static<typeof MinerEnvMetadataResponse>;
type EnvKeyMetadata = MinerEnvMetadata["keys"][number];
export type MinerEnvLaunch = Static<typeof MinerEnvLaunchResponse>;

interface EnvRow {
  kind: "set" | "empty";
  sealed: Uint8Array | null;
  keys: EnvKeyMetadata[];
  total_bytes: number;
  revision: number;
  updated_at: Date;
  locked_at: Date | null;
}

/** A launch as submission_launches records it. */
interface LaunchRow {
  env_kind: "set" | "empty";
  env_revision: number;
  launched_at: Date;
}

export interface MinerEnvRequest {
  submissionId: string;
  hotkey: string;
}

const envAad = (submissionId: string, revision: number) => `miner-env:${submissionId}:${revision}`;

async function envRow(tx: TransactionSql, submissionId: string): Promise<EnvRow | null> {
  const [row] = await tx<EnvRow[]>`
    select kind, sealed, keys, total_bytes, revision, updated_at, locked_at
    from submission_env where submission_id = ${submissionId}`;
  return row ?? null;
}

function metadataOf(submissionId: string, row: EnvRow | null): MinerEnvMetadata {
  return {
    submission_id: Number(submissionId),
    status: row?.kind ?? "unset",
    keys: row?.keys ?? [],
    total_bytes: row?.total_bytes ?? 0,
    revision: row?.revision ?? 0,
    locked: row?.locked_at != null,
    updated_at: row?.updated_at.toISOString() ?? null,
  };
}

/** GET env: the metadata. */
export function readMinerEnv(sql: Sql, request: MinerEnvRequest): Promise<MinerEnvMetadata> {
  return sql.begin(async (tx) => {
    const submission = await lockOwnedSubmission(tx, request.submissionId, request.hotkey);
    return metadataOf(submission.id, await envRow(tx, submission.id));
  }) as Promise<MinerEnvMetadata>;
}

/** PUT env: the whole set replaced (a new revision), sealed at rest. */
export function replaceMinerEnv(
  sql: Sql,
  request: MinerEnvRequest & { env: Record<string, string>; secretKey: Buffer },
): Promise<MinerEnvMetadata> {
  const { totalBytes } = checkEnv(request.env);
  return writeEnv(sql, request, (revision, submissionId) => {
    const names = Object.keys(request.env).sort();
    if (names.length === 0) {
      // An empty set is what confirm-empty says explicitly; PUT {} says the same thing.
      return { kind: "empty", sealed: null, keys: [], totalBytes: 0 };
    }
    const keys = names.map((name) => ({
      name,
      size: Buffer.byteLength(request.env[name]!, "utf8"),
      sha256: sha256Hex(request.env[name]!),
    }));
    const sorted = Object.fromEntries(names.map((name) => [name, request.env[name]!]));
    const sealed = seal(
      deriveKey(request.secretKey, KeyLabel.envEncryption),
      JSON.stringify(sorted),
      envAad(submissionId, revision),
    );
    return { kind: "set", sealed, keys, totalBytes };
  });
}

/** POST env/confirm-empty: an explicit "no env" (a new revision). */
export function confirmEmptyMinerEnv(
  sql: Sql,
  request: MinerEnvRequest,
): Promise<MinerEnvMetadata> {
  return writeEnv(sql, request, () => ({ kind: "empty", sealed: null, keys: [], totalBytes: 0 }));
}

function writeEnv(
  sql: Sql,
  request: MinerEnvRequest,
  build: (
    revision: number,
    submissionId: string,
  ) => { kind: "set" | "empty"; sealed: Buffer | null; keys: EnvKeyMetadata[]; totalBytes: number },
): Promise<MinerEnvMetadata> {
  return sql.begin(async (tx) => {
    const submission = await lockOwnedSubmission(tx, request.submissionId, request.hotkey);
    const current = await envRow(tx, submission.id);
    if (current?.locked_at) {
      throw new HttpError(
        409,
        ENV_ERROR_CODES.locked,
        "The env was locked by launch; it never changes again.",
      );
    }
    const revision = (current?.revision ?? 0) + 1;
    const next = build(revision, submission.id);
    await tx`
      insert into submission_env (submission_id, kind, sealed, keys, key_count, total_bytes, revision)
      values (${submission.id}, ${next.kind}, ${next.sealed}, ${tx.json(next.keys as never)},
        ${next.keys.length}, ${next.totalBytes}, ${revision})
      on conflict (submission_id) do update set
        kind = excluded.kind, sealed = excluded.sealed, keys = excluded.keys,
        key_count = excluded.key_count, total_bytes = excluded.total_bytes,
        revision = excluded.revision, updated_at = now()`;
    return metadataOf(submission.id, await envRow(tx, submission.id));
  }) as Promise<MinerEnvMetadata>;
}

/** POST launch: the go-ahead, once; it locks the env (412 when none was set or confirmed). */
export function launchEvaluation(sql: Sql, request: MinerEnvRequest): Promise<MinerEnvLaunch> {
  return sql.begin(async (tx) => {
    const submission = await lockOwnedSubmission(tx, request.submissionId, request.hotkey);
    const [launched] = await tx<LaunchRow[]>`
      select env_kind, env_revision, launched_at from submission_launches
      where submission_id = ${submission.id}`;
    if (launched) return launchOf(submission.id, submission.state, launched);
    const env = await envRow(tx, submission.id);
    if (!env) {
      throw new HttpError(
        412,
        ENV_ERROR_CODES.notConfirmed,
        "Set the env (PUT env) or confirm it empty (POST env/confirm-empty) before launch.",
      );
    }
    await tx`update submission_env set locked_at = now() where submission_id = ${submission.id}`;
    const [recorded] = await tx<LaunchRow[]>`
      insert into submission_launches (submission_id, env_kind, env_revision)
      values (${submission.id}, ${env.kind}, ${env.revision})
      returning env_kind, env_revision, launched_at`;
    return launchOf(submission.id, submission.state, recorded!);
  }) as Promise<MinerEnvLaunch>;
}

function launchOf(submissionId: string, state: string, row: LaunchRow): MinerEnvLaunch {
  return {
    submission_id: Number(submissionId),
    launched_at: row.launched_at.toISOString(),
    env_status: row.env_kind,
    env_revision: row.env_revision,
    submission_state: state,
  };
}

/** The env's values for the evaluation (an empty object for a confirmed-empty env). */
export async function openMinerEnv(
  tx: TransactionSql,
  submissionId: string,
  secretKey: Buffer,
): Promise<Record<string, string> | null> {
  const row = await envRow(tx, submissionId);
  if (!row) return null;
  if (row.kind === "empty" || row.sealed === null) return {};
  const plain = open(
    deriveKey(secretKey, KeyLabel.envEncryption),
    row.sealed,
    envAad(submissionId, row.revision),
  );
  return JSON.parse(plain.toString("utf8")) as Record<string, string>;
}
