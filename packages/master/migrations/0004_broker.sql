-- The container broker's ledger. Admission to the per-challenge quota is a row inserted here
-- BEFORE a container exists, so concurrent requests and several master replicas never
-- over-admit, and a restarted master can tell its orphans from live work.

-- One id per database: every master sharing this database labels its containers with it, so
-- a reaper only ever touches workloads of its own deployment (two deployments, or two test
-- runs, may share one Docker engine).
create table broker_instance (
  singleton boolean primary key default true check (singleton),
  id text not null,
  created_at timestamptz not null default now()
);

insert into broker_instance (id) values (substr(replace(gen_random_uuid()::text, '-', ''), 1, 16));

-- One row per workload. A live row (ended_at null) holds a quota slot; rows with gpus > 0 are
-- the challenge's GPU leases and are kept after they end as its lease history.
create table broker_runs (
  container_name text primary key,
  slug text not null references challenges (slug) on delete cascade,
  job_id text not null,
  backend text not null check (backend in ('engine', 'swarm')),
  -- docker info ID (engine) or swarm cluster ID: a reaper reconciles only rows of its engine.
  engine_id text not null,
  -- The master process that waits for the workload; a reaper leaves other live runners' rows alone.
  runner text not null,
  image text not null,
  gpus integer not null default 0 check (gpus >= 0),
  gpu_devices text[] not null default '{}',
  status text not null default 'running'
    check (status in ('running', 'exited', 'timed_out', 'oom_killed', 'failed', 'cleaned', 'reaped', 'lost')),
  returncode integer,
  deadline timestamptz not null,
  started_at timestamptz not null default now(),
  ended_at timestamptz,
  check ((ended_at is null) = (status = 'running'))
);

create index broker_runs_live_idx on broker_runs (slug) where ended_at is null;
create index broker_runs_gpu_idx on broker_runs (slug, started_at desc) where gpus > 0;
create index broker_runs_ended_idx on broker_runs (ended_at) where ended_at is not null;
