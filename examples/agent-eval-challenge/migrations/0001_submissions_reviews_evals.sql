-- The agent-eval challenge's core records: submissions and their status history, review
-- sessions and their immutable assignments, operator approvals, external Eval runs, and the
-- per-hotkey submission window. Applied once, in order, under this challenge's slug; never edit
-- a migration that has run somewhere: add 0002_*.sql instead. Part-2 records (miner env,
-- telemetry sessions, progress events, replay audits) come in a later migration.
--
-- The state machines live in src/state/*-states.ts as data; the check constraints below list
-- the same states, so a row can never hold a state the code does not know. Every rule that can
-- be a constraint is one: the application checks first (for a clear 409), the database refuses
-- whatever slips past (a bug, a race, a hand-written UPDATE).

-- The immutable and write-once triggers fire only on updates naming their columns ("before
-- update of"), so ordinary writes (state, the event counter) never serialise the artifact.

-- Keeps updated_at honest on every write, whichever code path wrote.
create function agent_eval_touch_updated_at() returns trigger language plpgsql as $$
begin
  new.updated_at := now();
  return new;
end;
$$;

-- Columns named in the trigger's arguments never change once the row exists.
create function agent_eval_immutable_columns() returns trigger language plpgsql as $$
declare
  col text;
  before jsonb := to_jsonb(old);
  after jsonb := to_jsonb(new);
begin
  foreach col in array tg_argv loop
    if (before -> col) is distinct from (after -> col) then
      raise exception 'immutable column %.% cannot change', tg_table_name, col
        using errcode = 'check_violation';
    end if;
  end loop;
  return new;
end;
$$;

-- Columns named in the trigger's arguments are written at most once: null -> value, never
-- value -> another value, nor back to null. (Setting a column to the value it holds changes
-- nothing and passes; deciding what an identical replay answers is the caller's business.)
create function agent_eval_write_once_columns() returns trigger language plpgsql as $$
declare
  col text;
  before jsonb := to_jsonb(old);
  after jsonb := to_jsonb(new);
begin
  foreach col in array tg_argv loop
    if (before -> col) <> 'null'::jsonb and (before -> col) is distinct from (after -> col) then
      raise exception 'write-once column %.% is already set', tg_table_name, col
        using errcode = 'check_violation';
    end if;
  end loop;
  return new;
end;
$$;

-- ---------------------------------------------------------------------------------------------
-- Submissions. Ids are bigint (postgres.js reads them as strings); every other id is text.
create table submissions (
  id bigint generated always as identity primary key,
  hotkey text not null check (char_length(hotkey) between 1 and 128),
  name text not null check (char_length(name) between 1 and 128),
  filename text not null check (char_length(filename) between 1 and 255),
  -- The exact ZIP bytes (<= 1 MiB). Served only to the review VM, after re-hashing.
  artifact bytea not null check (octet_length(artifact) between 1 and 1048576),
  -- sha256 hex of the ZIP bytes, computed by the server; the database recomputes it, so a row
  -- whose hash and bytes disagree cannot exist. Unique: the same code twice is a 409.
  artifact_sha256 text not null unique check (artifact_sha256 = encode(sha256(artifact), 'hex')),
  size integer not null check (size = octet_length(artifact)),
  -- 'signed': POST /submissions; 'bridge': uploaded through the master.
  via text not null check (via in ('signed', 'bridge')),
  state text not null default 'received' check (state in (
    'received',
    'review_queued', 'review_running', 'review_verifying',
    'review_allowed', 'review_rejected', 'review_escalated', 'review_error',
    'review_cancelled', 'review_expired',
    'eval_running', 'completed', 'eval_failed', 'eval_rejected')),
  -- The last per-submission status event seq handed out. Incrementing it (a row lock) is how
  -- concurrent writers get gap-free, unique seqs: a rolled-back writer gives its number back.
  last_event_seq integer not null default 0 check (last_event_seq >= 0),
  -- The run eval retry/cancel/failure must name (compare-and-swap); foreign key added below.
  current_eval_run_id text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

create trigger submissions_touch before update on submissions
  for each row execute function agent_eval_touch_updated_at();
create trigger submissions_immutable before update of
    id, hotkey, name, filename, artifact, artifact_sha256, size, via, created_at
  on submissions
  for each row execute function agent_eval_immutable_columns(
    'id', 'hotkey', 'name', 'filename', 'artifact', 'artifact_sha256', 'size', 'via', 'created_at');

create index submissions_recent on submissions (created_at desc, id desc);
create index submissions_hotkey on submissions (hotkey, created_at desc);
-- The version family of a submission: the same hotkey and name, numbered by id.
create index submissions_version_family on submissions (hotkey, name, id);

-- Every state change of a submission, its assignments and its runs, numbered per submission
-- (1, 2, 3, ... with no gap): the review/eval history and the live feed are built on it.
create table submission_status_events (
  submission_id bigint not null references submissions (id) on delete cascade,
  seq integer not null check (seq >= 1),
  -- Which machine moved: the submission itself, one review assignment, or one eval run.
  machine text not null check (machine in ('submission', 'assignment', 'eval_run')),
  subject_id text not null check (char_length(subject_id) between 1 and 64),
  event text not null check (event ~ '^[a-z][a-z0-9_]{0,63}$'),
  -- Null only for the event that created the subject.
  from_state text check (from_state ~ '^[a-z][a-z0-9_]{0,63}$'),
  to_state text not null check (to_state ~ '^[a-z][a-z0-9_]{0,63}$'),
  -- A stable machine-readable reason (e.g. a failure reason_code) and a bounded sentence.
  reason_code text check (reason_code ~ '^[a-z][a-z0-9_]{0,63}$'),
  reason text check (char_length(reason) <= 1024),
  actor text not null check (actor in ('miner', 'review_vm', 'eval_vm', 'operator', 'owner', 'system')),
  at timestamptz not null default now(),
  primary key (submission_id, seq)
);

-- History is append-only: an event, once written, never changes.
create function agent_eval_refuse_update() returns trigger language plpgsql as $$
begin
  raise exception '% is append-only', tg_table_name using errcode = 'check_violation';
end;
$$;
create trigger submission_status_events_append_only before update on submission_status_events
  for each row execute function agent_eval_refuse_update();

-- One accepted submission per hotkey per window (3 h). The row is upserted with
-- "on conflict (hotkey) do update ... where next_allowed_at <= now": the primary key's row lock
-- serialises two concurrent submissions of one hotkey, and the second sees the first's window.
create table hotkey_submission_windows (
  hotkey text primary key check (char_length(hotkey) between 1 and 128),
  submission_id bigint not null unique references submissions (id) on delete cascade,
  accepted_at timestamptz not null,
  next_allowed_at timestamptz not null check (next_allowed_at > accepted_at)
);

-- ---------------------------------------------------------------------------------------------
-- Review: one session per submission (its chain of attempts), one current assignment per session.
create table review_sessions (
  id text primary key check (id ~ '^[A-Za-z0-9_-]{1,64}$'),
  submission_id bigint not null unique references submissions (id) on delete cascade,
  -- The assignment retry/cancel must name (compare-and-swap); foreign key added below.
  current_assignment_id text not null,
  -- Assignments issued so far; at most 16 per session.
  attempts integer not null check (attempts between 1 and 16),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (id, submission_id)
);

create trigger review_sessions_touch before update on review_sessions
  for each row execute function agent_eval_touch_updated_at();
create trigger review_sessions_immutable before update of
    id, submission_id, created_at
  on review_sessions
  for each row execute function agent_eval_immutable_columns('id', 'submission_id', 'created_at');

create table review_assignments (
  id text primary key check (id ~ '^[A-Za-z0-9_-]{1,64}$'),
  session_id text not null,
  submission_id bigint not null,
  attempt integer not null check (attempt between 1 and 16),
  -- The terminal assignment this one retries; null exactly for the first attempt.
  predecessor_id text unique references review_assignments (id),
  -- The canonical "assignment core" (review assignment v1) and the sha256 hex of its canonical
  -- JSON: what the VM reviews and what the report must be bound to. Immutable.
  core jsonb not null check (jsonb_typeof(core) = 'object'),
  core_sha256 text not null check (core_sha256 ~ '^[0-9a-f]{64}$'),
  state text not null default 'queued' check (state in (
    'queued', 'deployed', 'model_call_started', 'verifying',
    'allowed', 'rejected', 'escalated', 'error', 'cancelled', 'expired')),
  -- Only the sha256 of the assignment-scoped bearer token is stored.
  token_sha256 text not null unique check (token_sha256 ~ '^[0-9a-f]{64}$'),
  -- When prepare handed the token out (exactly once: a second delivery is refused).
  token_delivered_at timestamptz,
  -- The nonce the report_data binds. Active while the assignment is; a definitive review outcome
  -- consumes it; cancel, expiry, failure revoke it.
  nonce text not null unique check (nonce ~ '^[A-Za-z0-9_-]{16,128}$'),
  nonce_state text not null default 'active' check (nonce_state in ('active', 'consumed', 'revoked')),
  issued_at timestamptz not null default now(),
  -- 30 min TTL from issue, lazily enforced on every read and write.
  expires_at timestamptz not null
    check (expires_at > issued_at and expires_at <= issued_at + interval '30 minutes'),
  -- Write-once records, each with the time it was written.
  deployed jsonb check (jsonb_typeof(deployed) = 'object'),
  deployed_at timestamptz,
  model_call jsonb check (jsonb_typeof(model_call) = 'object'),
  model_call_at timestamptz,
  failure jsonb check (jsonb_typeof(failure) = 'object'),
  failed_at timestamptz,
  report_envelope jsonb check (jsonb_typeof(report_envelope) = 'object'),
  receipt_sha256 text check (receipt_sha256 ~ '^[0-9a-f]{64}$'),
  reported_at timestamptz,
  -- The definitive verification outcome (verified or not, and why); "verifier unavailable" is
  -- not an outcome and writes nothing.
  verification jsonb check (jsonb_typeof(verification) = 'object'),
  verified_at timestamptz,
  updated_at timestamptz not null default now(),
  unique (session_id, attempt),
  unique (id, session_id),
  unique (id, submission_id),
  -- The session belongs to the same submission as the assignment.
  foreign key (session_id, submission_id) references review_sessions (id, submission_id)
    on delete cascade deferrable initially deferred,
  check ((attempt = 1) = (predecessor_id is null)),
  -- The nonce follows the state: active while active, consumed by a definitive outcome, revoked
  -- by cancel, expiry or failure.
  check (nonce_state = case
    when state in ('queued', 'deployed', 'model_call_started', 'verifying') then 'active'
    when state in ('allowed', 'rejected', 'escalated') then 'consumed'
    else 'revoked' end),
  -- Each record is written with its time, and a state past a phase carries that phase's record.
  check ((deployed is null) = (deployed_at is null)),
  check ((model_call is null) = (model_call_at is null)),
  check ((failure is null) = (failed_at is null)),
  check ((report_envelope is null) = (reported_at is null)),
  check ((report_envelope is null) = (receipt_sha256 is null)),
  check ((verification is null) = (verified_at is null)),
  check (state not in ('deployed', 'model_call_started', 'verifying', 'allowed', 'rejected', 'escalated')
    or deployed is not null),
  check (state not in ('model_call_started', 'verifying', 'allowed', 'rejected', 'escalated')
    or model_call is not null),
  check (state not in ('verifying', 'allowed', 'rejected', 'escalated') or report_envelope is not null),
  check (state not in ('allowed', 'rejected', 'escalated') or verification is not null),
  check ((state = 'error') = (failure is not null))
);

create trigger review_assignments_touch before update on review_assignments
  for each row execute function agent_eval_touch_updated_at();
create trigger review_assignments_immutable before update of
    id, session_id, submission_id, attempt, predecessor_id, core, core_sha256, token_sha256,
    nonce, issued_at, expires_at
  on review_assignments
  for each row execute function agent_eval_immutable_columns(
    'id', 'session_id', 'submission_id', 'attempt', 'predecessor_id', 'core', 'core_sha256',
    'token_sha256', 'nonce', 'issued_at', 'expires_at');
create trigger review_assignments_write_once before update of
    token_delivered_at, deployed, deployed_at, model_call, model_call_at, failure,
    failed_at, report_envelope, receipt_sha256, reported_at, verification, verified_at
  on review_assignments
  for each row execute function agent_eval_write_once_columns(
    'token_delivered_at', 'deployed', 'deployed_at', 'model_call', 'model_call_at', 'failure',
    'failed_at', 'report_envelope', 'receipt_sha256', 'reported_at', 'verification', 'verified_at');

-- At most one active assignment per session, whatever the current pointer says.
create unique index review_assignments_one_active on review_assignments (session_id)
  where state in ('queued', 'deployed', 'model_call_started', 'verifying');
-- Lazy expiry finds what is past its TTL without a scan.
create index review_assignments_expiry on review_assignments (expires_at)
  where state in ('queued', 'deployed', 'model_call_started', 'verifying');
create index review_assignments_submission on review_assignments (submission_id, attempt);

-- The current assignment belongs to its session. Deferred: a session and its first assignment
-- are inserted in one transaction, in either order.
alter table review_sessions add foreign key (current_assignment_id, id)
  references review_assignments (id, session_id) deferrable initially deferred;

-- A validator's one-use permission to retry after a rejected or escalated attempt. It names the
-- predecessor it was granted for, lives at most 300 s, and is consumed by the retry it permits.
create table review_operator_approvals (
  id text primary key check (id ~ '^[A-Za-z0-9_-]{1,64}$'),
  session_id text not null,
  predecessor_assignment_id text not null,
  approved_by text not null check (char_length(approved_by) between 1 and 128),
  created_at timestamptz not null default now(),
  expires_at timestamptz not null
    check (expires_at > created_at and expires_at <= created_at + interval '300 seconds'),
  used_at timestamptz,
  -- The retry it was spent on; one approval, one retry.
  used_by_assignment_id text unique references review_assignments (id),
  foreign key (predecessor_assignment_id, session_id) references review_assignments (id, session_id)
    on delete cascade,
  check ((used_at is null) = (used_by_assignment_id is null))
);

create trigger review_operator_approvals_immutable before update of
    id, session_id, predecessor_assignment_id, approved_by, created_at, expires_at
  on review_operator_approvals
  for each row execute function agent_eval_immutable_columns(
    'id', 'session_id', 'predecessor_assignment_id', 'approved_by', 'created_at', 'expires_at');
create trigger review_operator_approvals_write_once before update of
    used_at, used_by_assignment_id
  on review_operator_approvals
  for each row execute function agent_eval_write_once_columns('used_at', 'used_by_assignment_id');

create index review_operator_approvals_unused on review_operator_approvals (session_id, predecessor_assignment_id)
  where used_at is null;

-- ---------------------------------------------------------------------------------------------
-- External Eval runs, issued after a verified allow.
create table eval_runs (
  id text primary key check (id ~ '^[A-Za-z0-9_-]{1,64}$'),
  submission_id bigint not null,
  -- The allowed assignment that authorised this run.
  review_assignment_id text not null,
  -- 1..8 per submission, 1..3 per authorising review.
  run_number integer not null check (run_number between 1 and 8),
  review_run_number integer not null check (review_run_number between 1 and 3),
  predecessor_id text unique references eval_runs (id),
  state text not null default 'prepared' check (state in (
    'prepared', 'running', 'verifying', 'accepted', 'rejected', 'cancelled', 'expired', 'error')),
  -- The immutable plan v1 and the sha256 hex of its canonical JSON.
  plan jsonb not null check (jsonb_typeof(plan) = 'object'),
  plan_sha256 text not null check (plan_sha256 ~ '^[0-9a-f]{64}$'),
  token_sha256 text not null unique check (token_sha256 ~ '^[0-9a-f]{64}$'),
  token_delivered_at timestamptz,
  nonce text not null unique check (nonce ~ '^[A-Za-z0-9_-]{16,128}$'),
  issued_at timestamptz not null default now(),
  -- 6 h TTL from issue.
  expires_at timestamptz not null
    check (expires_at > issued_at and expires_at <= issued_at + interval '6 hours'),
  started_at timestamptz,
  -- Write-once: the sha256 hex of the byte-exact canonical result, when it was received, and
  -- (when accepted) its score in [0, 1].
  result_sha256 text check (result_sha256 ~ '^[0-9a-f]{64}$'),
  result_received_at timestamptz,
  score double precision check (score >= 0 and score <= 1),
  accepted_at timestamptz,
  -- Write-once: the bounded failure record (cancel carries no record).
  failure_code text check (failure_code in ('deploy_failed', 'tunnel_failed', 'key_release_unavailable', 'no_result')),
  failure jsonb check (jsonb_typeof(failure) = 'object'),
  failed_at timestamptz,
  updated_at timestamptz not null default now(),
  unique (submission_id, run_number),
  unique (review_assignment_id, review_run_number),
  unique (id, submission_id),
  foreign key (review_assignment_id, submission_id) references review_assignments (id, submission_id)
    on delete cascade,
  check ((run_number = 1) = (predecessor_id is null)),
  check ((result_sha256 is null) = (result_received_at is null)),
  check (state not in ('verifying', 'accepted', 'rejected') or result_sha256 is not null),
  -- Cancel and failure happen only before any result.
  check (state not in ('cancelled', 'error') or result_sha256 is null),
  check ((state = 'accepted') = (accepted_at is not null)),
  check ((state = 'accepted') = (score is not null)),
  check ((failure is null) = (failed_at is null)),
  check ((failure is null) = (failure_code is null)),
  check ((state = 'error') = (failure is not null))
);

create trigger eval_runs_touch before update on eval_runs
  for each row execute function agent_eval_touch_updated_at();
create trigger eval_runs_immutable before update of
    id, submission_id, review_assignment_id, run_number, review_run_number, predecessor_id,
    plan, plan_sha256, token_sha256, nonce, issued_at, expires_at
  on eval_runs
  for each row execute function agent_eval_immutable_columns(
    'id', 'submission_id', 'review_assignment_id', 'run_number', 'review_run_number',
    'predecessor_id', 'plan', 'plan_sha256', 'token_sha256', 'nonce', 'issued_at', 'expires_at');
create trigger eval_runs_write_once before update of
    token_delivered_at, started_at, result_sha256, result_received_at, score, accepted_at,
    failure_code, failure, failed_at
  on eval_runs
  for each row execute function agent_eval_write_once_columns(
    'token_delivered_at', 'started_at', 'result_sha256', 'result_received_at', 'score',
    'accepted_at', 'failure_code', 'failure', 'failed_at');

-- At most one active run per submission.
create unique index eval_runs_one_active on eval_runs (submission_id)
  where state in ('prepared', 'running', 'verifying');
create index eval_runs_expiry on eval_runs (expires_at) where state in ('prepared', 'running');
-- Weights and the eval status history.
create index eval_runs_accepted on eval_runs (accepted_at) where state = 'accepted';

-- The current run belongs to its submission (deferred: the run and the pointer are written in
-- one transaction).
alter table submissions add foreign key (current_eval_run_id, id)
  references eval_runs (id, submission_id) deferrable initially deferred;
