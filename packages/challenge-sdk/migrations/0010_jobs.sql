-- The job queue of @platform/challenge-sdk (createJobQueue): one table holds every queue of a
-- challenge. Times are the database's (now()), never a worker's clock, so skewed workers agree.
create table sdk_jobs (
  id bigint generated always as identity primary key,
  queue text not null,
  -- Idempotency key: enqueueing the same (queue, key) again returns the existing job.
  idempotency_key text,
  payload jsonb not null,
  status text not null default 'pending',
  priority integer not null default 0,
  attempts integer not null default 0,
  max_attempts integer not null default 5,
  run_at timestamptz not null default now(),
  -- Fencing number: +1 at every claim; only the holder of the current value may finish the job.
  lease_token bigint not null default 0,
  lease_owner text,
  lease_expires_at timestamptz,
  last_error text,
  result jsonb,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  started_at timestamptz,
  finished_at timestamptz,
  constraint sdk_jobs_status_check
    check (status in ('pending', 'running', 'completed', 'dead', 'cancelled')),
  constraint sdk_jobs_max_attempts_check check (max_attempts between 1 and 1000),
  constraint sdk_jobs_attempts_check check (attempts >= 0),
  constraint sdk_jobs_key_unique unique (queue, idempotency_key)
);

-- What claim() scans: ready pending jobs and running jobs whose lease may have expired.
create index sdk_jobs_claimable on sdk_jobs (queue, priority desc, run_at, id)
  where status in ('pending', 'running');

-- stats() and list() by queue and status, newest first.
create index sdk_jobs_by_status on sdk_jobs (queue, status, id desc);
