-- The owner's revalidate requests (rule 23): a new evaluation of the same immutable artifact,
-- issued by the miner's next eval/prepare (the run token goes to the miner, never the owner).
-- At most one pending request per submission; consuming names the run it started.
create table eval_revalidations (
  id text primary key check (id ~ '^[A-Za-z0-9_-]{1,64}$'),
  submission_id bigint not null references submissions (id) on delete cascade,
  requested_by text not null check (char_length(requested_by) between 1 and 128),
  requested_at timestamptz not null default now(),
  consumed_run_id text unique references eval_runs (id),
  consumed_at timestamptz,
  check ((consumed_run_id is null) = (consumed_at is null))
);
create unique index eval_revalidations_one_pending on eval_revalidations (submission_id)
  where consumed_run_id is null;
create trigger eval_revalidations_immutable before update of
    id, submission_id, requested_by, requested_at
  on eval_revalidations
  for each row execute function agent_eval_immutable_columns(
    'id', 'submission_id', 'requested_by', 'requested_at');
create trigger eval_revalidations_write_once before update of consumed_run_id, consumed_at
  on eval_revalidations
  for each row execute function agent_eval_write_once_columns('consumed_run_id', 'consumed_at');
