-- The miner's environment for its agent's evaluation, and the miner's go-ahead (launch).
-- Values are sealed at rest (AES-256-GCM under a key derived from SECRET_KEY_FILE, the
-- submission and revision as associated data) and never returned: the metadata (names, sizes,
-- sha256) is what the routes show. A launch locks the environment for good.
create table submission_env (
  submission_id bigint primary key references submissions (id) on delete cascade,
  -- 'set': the sealed map below; 'empty': the miner confirmed it wants none.
  kind text not null check (kind in ('set', 'empty')),
  sealed bytea,
  -- [{name, size, sha256}] sorted by name: what GET shows.
  keys jsonb not null check (jsonb_typeof(keys) = 'array'),
  key_count integer not null check (key_count between 0 and 64),
  total_bytes integer not null check (total_bytes between 0 and 131072),
  -- Every replacement is a new revision (the sealed box is bound to it).
  revision integer not null check (revision >= 1),
  updated_at timestamptz not null default now(),
  -- Set by launch; from then on the row never changes.
  locked_at timestamptz,
  check ((kind = 'empty') = (sealed is null)),
  check ((kind = 'empty') = (key_count = 0))
);

-- Once locked, nothing changes (the application answers 409 env_locked first).
create function agent_eval_refuse_locked_env() returns trigger language plpgsql as $$
begin
  if old.locked_at is not null then
    raise exception 'submission_env % is locked', old.submission_id using errcode = 'check_violation';
  end if;
  return new;
end;
$$;
create trigger submission_env_locked before update on submission_env
  for each row execute function agent_eval_refuse_locked_env();

-- The miner's go-ahead for evaluation: once per submission, naming the env it locked.
create table submission_launches (
  submission_id bigint primary key references submissions (id) on delete cascade,
  env_kind text not null check (env_kind in ('set', 'empty')),
  env_revision integer not null check (env_revision >= 1),
  launched_at timestamptz not null default now()
);
create trigger submission_launches_append_only before update on submission_launches
  for each row execute function agent_eval_refuse_update();
