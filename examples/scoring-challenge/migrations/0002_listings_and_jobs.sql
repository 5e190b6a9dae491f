-- What the legacy listings group by, which queue job carries a submission, and how often the
-- harness failed on it.

-- sha256 hex of architecture.py and of training.py: GET /v1/architectures lists one family per
-- distinct architecture.py, GET /v1/training-variants one variant per distinct pair. Null only
-- for rows stored before this migration.
alter table submissions
  add column architecture_hash text check (architecture_hash ~ '^[0-9a-f]{64}$'),
  add column training_hash text check (training_hash ~ '^[0-9a-f]{64}$'),
  -- The SDK job-queue job that currently carries this submission (a release enqueues a new one).
  add column job_id text check (job_id ~ '^[0-9]+$'),
  -- Runs the harness itself could not finish (its protocol, its own fault). They are retried as
  -- infrastructure, but only a few times: a bundle that keeps breaking the harness then fails,
  -- instead of occupying the workers forever.
  add column harness_failures integer not null default 0 check (harness_failures >= 0);

create index submissions_variants on submissions (architecture_hash, training_hash, id);
