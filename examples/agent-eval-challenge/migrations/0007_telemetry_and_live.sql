-- Telemetry and the live feed of eval runs (rules 14, 15, 21, 22): telemetry sessions opened
-- with a grant the submission's hotkey signed, the attempts an eval worker runs (one per task
-- trial, each with its own scoped bearer for its log stream), and the task-log events that
-- progress posts and attempt log lines append. None of these tables is read by a score or a
-- weight: the result route stays the only path to a score.

-- A telemetry session: the run token plus a grant signed by the submission's hotkey. The
-- session id is returned once and only its HMAC (KeyLabel.telemetry) is kept; the grant's
-- nonce is unique per hotkey for good (a replayed grant opens nothing), its timestamp within the
-- skew window.
create table eval_telemetry_sessions (
  id_mac text primary key check (id_mac ~ '^[0-9a-f]{64}$'),
  run_id text not null references eval_runs (id) on delete cascade,
  hotkey text not null check (hotkey ~ '^[1-9A-HJ-NP-Za-km-z]{40,60}$'),
  grant_nonce text not null check (grant_nonce ~ '^[\x21-\x7e]{8,128}$'),
  grant_timestamp timestamptz not null,
  opened_at timestamptz not null default now(),
  expires_at timestamptz not null
    check (expires_at > opened_at and expires_at <= opened_at + interval '1 hour'),
  unique (hotkey, grant_nonce)
);
create index eval_telemetry_sessions_run on eval_telemetry_sessions (run_id);
create trigger eval_telemetry_sessions_append_only before update on eval_telemetry_sessions
  for each row execute function agent_eval_refuse_update();

-- One attempt: one trial of one plan task in one run. Its bearer (`<attempt id>.<MAC>`, only the
-- sha256 kept) opens nothing but the attempt's own events route. Opening the same trial again
-- answers the same attempt and token (a worker that lost the answer can go on).
create table eval_attempts (
  id text primary key check (id ~ '^[A-Za-z0-9_-]{1,64}$'),
  run_id text not null,
  submission_id bigint not null,
  task_id text not null check (task_id ~ '^[a-z0-9][a-z0-9-]{0,63}$'),
  trial integer not null check (trial between 1 and 16),
  token_sha256 text not null unique check (token_sha256 ~ '^[0-9a-f]{64}$'),
  opened_at timestamptz not null default now(),
  -- Log bytes stored for this attempt (after redaction and truncation): the caps count these.
  log_bytes bigint not null default 0 check (log_bytes >= 0),
  unique (run_id, task_id, trial),
  foreign key (run_id, submission_id) references eval_runs (id, submission_id) on delete cascade
);
create index eval_attempts_submission on eval_attempts (submission_id);

-- The task-log events of a run: task.status and task.progress from the progress route (with the
-- task's increasing sequence number), task.log from an attempt's events route (attributed from
-- the attempt's own row). Redacted before they are written; append-only.
create table eval_task_events (
  id bigint generated always as identity primary key,
  submission_id bigint not null,
  run_id text not null,
  task_id text not null check (task_id ~ '^[a-z0-9][a-z0-9-]{0,63}$'),
  attempt_id text references eval_attempts (id) on delete cascade,
  kind text not null check (kind in ('task.status', 'task.progress', 'task.log')),
  -- The progress route's per-task sequence number; null for log lines.
  seq integer check (seq between 1 and 2147483647),
  payload jsonb not null check (jsonb_typeof(payload) = 'object'),
  -- The stored size of the payload (what the caps count).
  bytes integer not null check (bytes between 0 and 80000),
  created_at timestamptz not null default now(),
  check ((kind = 'task.log') = (attempt_id is not null)),
  check ((kind = 'task.log') = (seq is null)),
  foreign key (run_id, submission_id) references eval_runs (id, submission_id) on delete cascade
);
create unique index eval_task_events_seq on eval_task_events (run_id, task_id, seq)
  where seq is not null;
-- The live feed reads a submission's events in order; the live pool a task's latest.
create index eval_task_events_submission on eval_task_events (submission_id, id);
create index eval_task_events_task on eval_task_events (run_id, task_id, id);
create trigger eval_task_events_append_only before update on eval_task_events
  for each row execute function agent_eval_refuse_update();
