-- The secret each epoch's scored windows are drawn from (src/window-secret.ts, src/scored-bytes.ts).
-- Made once, by the first instance that needs it, and shared by every replica on this database so
-- they all score an epoch on the same bytes. It never leaves the service: no route reads it.
create table scoring_secrets (
  name text primary key check (name ~ '^[a-z][a-z0-9_]{0,62}$'),
  value bytea not null check (octet_length(value) >= 32),
  created_at timestamptz not null default now()
);
