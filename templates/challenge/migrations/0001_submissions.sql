-- One row per accepted submission. Applied once, in order, under this challenge's slug; never
-- edit a migration that has run somewhere: add 0002_*.sql instead.
create table submissions (
  id integer generated always as identity primary key,
  hotkey text not null,
  task_id text not null,
  -- The miner's answer. Never served back publicly: another miner would copy the best one.
  tour jsonb not null,
  -- 'signed': straight to POST /v1/submissions; 'bridge': uploaded through the master.
  via text not null check (via in ('signed', 'bridge')),
  request_hash text,
  filename text,
  status text not null default 'pending'
    check (status in ('pending', 'running', 'completed', 'rejected', 'failed')),
  final_score double precision,
  tour_length double precision,
  error text,
  created_at timestamptz not null default now(),
  scored_at timestamptz
);

-- The leaderboard and the weights read each hotkey's best completed tour of the current task.
create index submissions_best on submissions (task_id, hotkey, final_score desc)
  where status = 'completed';
