-- The reconciler (docs/master.md, "The reconciler"): one master at a time keeps every active
-- challenge's container running. Its lease and what it last saw and did per challenge live
-- here, so any replica can show them and a replica that takes over continues the backoff.

-- A named lease held by one master process until expires_at (the database's clock, never a
-- replica's). Renewed by its holder; taken over by another once expired or released.
create table master_leases (
  name text primary key,
  holder text not null,
  acquired_at timestamptz not null default now(),
  renewed_at timestamptz not null default now(),
  expires_at timestamptz not null,
  -- The holder's last pass: when it ended and why it failed (the engine unreachable), or null.
  last_pass_at timestamptz,
  last_error text
);

-- The reconciler's state per challenge. desired comes from the registry; observed is what the
-- engine showed at the last pass; the pinned image is what the container runs (a digest, or
-- the engine's image id for an image no registry knows), re-resolved only when the registry's
-- image changes.
create table challenge_runtime (
  slug text primary key references challenges (slug) on delete cascade,
  desired text not null check (desired in ('running', 'stopped')),
  observed text not null default 'unknown',
  image text,
  pinned_image text,
  container_id text,
  last_action text,
  last_action_at timestamptz,
  last_error text,
  -- Restarts for cause (crashed, exited, unhealthy) since the row was created.
  restarts integer not null default 0 check (restarts >= 0),
  -- Failed starts or restarts since the challenge was last stable: the backoff's exponent.
  failures integer not null default 0 check (failures >= 0),
  next_attempt_at timestamptz,
  updated_at timestamptz not null default now()
);

-- The admin view reads a challenge's runtime events (kind runtime_*) newest first.
create index challenge_events_runtime_idx on challenge_events (slug, id desc)
  where kind like 'runtime\_%';
