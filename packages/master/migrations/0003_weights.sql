-- Every weights snapshot the master computed, newest last. The vector, the per-hotkey view and
-- the sources are what GET /v1/weights/latest serves; `collection` is the operator detail of the
-- run that produced it (latency, attempts, what cleaning dropped, the metagraph's state), which
-- the dashboard and the admin history read. Older rows are pruned by count on each insert.
create table weight_snapshots (
  id bigserial primary key,
  computed_at timestamptz not null default now(),
  uids jsonb not null,
  weights jsonb not null,
  weights_u16 jsonb not null,
  hotkeys jsonb not null,
  burned boolean not null,
  sources jsonb not null,
  failure_policy text not null check (failure_policy in ('burn', 'redistribute')),
  collection jsonb not null default '{}'
);
