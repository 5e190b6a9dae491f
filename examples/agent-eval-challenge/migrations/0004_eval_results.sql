-- The eval results: the exact canonical bytes the eval VM posted for a run, what was decided,
-- and the per-task scores. Immutable: weights and replay audits are rebuilt from these rows,
-- never from a mutable column.
create table eval_results (
  run_id text primary key references eval_runs (id) on delete cascade,
  submission_id bigint not null references submissions (id) on delete cascade,
  -- The byte-exact canonical JSON body and its sha256 (what "identical replay" compares).
  body text not null check (octet_length(body) <= 262144),
  result_sha256 text not null check (result_sha256 ~ '^[0-9a-f]{64}$'),
  -- The result core as posted: tasks with their trial scores, the job score.
  result_core jsonb not null check (jsonb_typeof(result_core) = 'object'),
  received_at timestamptz not null default now(),
  -- Written once when decided (null while the verifier is unavailable).
  verification jsonb check (jsonb_typeof(verification) = 'object'),
  verified_at timestamptz,
  -- Whether the result covers every task of the plan with at least one passed task: the only
  -- results weights count.
  complete boolean,
  check ((verification is null) = (verified_at is null)),
  check ((verification is null) = (complete is null))
);

create trigger eval_results_immutable before update of
    run_id, submission_id, body, result_sha256, result_core, received_at
  on eval_results
  for each row execute function agent_eval_immutable_columns(
    'run_id', 'submission_id', 'body', 'result_sha256', 'result_core', 'received_at');
create trigger eval_results_write_once before update of verification, verified_at, complete
  on eval_results
  for each row execute function agent_eval_write_once_columns('verification', 'verified_at', 'complete');
