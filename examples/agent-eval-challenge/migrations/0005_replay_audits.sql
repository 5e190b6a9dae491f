-- Replay audits: what a validator's replay of an accepted, fully attested run measured, compared
-- with the attested score. One row per (run, audit id), written once; it never changes a score,
-- a run or the weights (which read eval_results only).
create table replay_audit_results (
  run_id text not null references eval_runs (id) on delete cascade,
  audit_id text not null check (audit_id ~ '^[A-Za-z0-9_-]{1,64}$'),
  -- The replayed per-task trial scores as posted, and their canonical sha256 (idempotency).
  replay jsonb not null check (jsonb_typeof(replay) = 'array'),
  replay_sha256 text not null check (replay_sha256 ~ '^[0-9a-f]{64}$'),
  attested_score double precision not null check (attested_score between 0 and 1),
  replay_score double precision not null check (replay_score between 0 and 1),
  delta double precision not null check (delta between 0 and 1),
  tolerance double precision not null check (tolerance between 0 and 1),
  exceeds_tolerance boolean not null,
  recorded_at timestamptz not null default now(),
  primary key (run_id, audit_id)
);
create trigger replay_audit_results_append_only before update on replay_audit_results
  for each row execute function agent_eval_refuse_update();
