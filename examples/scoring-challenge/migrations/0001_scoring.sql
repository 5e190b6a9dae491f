-- The scoring challenge's tables. Applied once, in order, under this challenge's slug; never edit
-- a migration that has run somewhere: add 0002_*.sql instead. Times are the database's now(), so
-- several replicas and workers agree on them.

-- Keeps updated_at honest on every write, whichever code path wrote.
create function scoring_touch_updated_at() returns trigger language plpgsql as $$
begin
  new.updated_at := now();
  return new;
end;
$$;

-- One row per accepted bundle. Ids are bigint (postgres.js reads them as strings, which is what
-- the spec's status record shows).
create table submissions (
  id bigint generated always as identity primary key,
  hotkey text not null,
  -- floor(unix seconds at acceptance / EPOCH_SECONDS): the leaderboard this bundle competes on.
  epoch_id bigint not null check (epoch_id >= 0),
  status text not null default 'pending'
    check (status in ('pending', 'running', 'completed', 'failed', 'rejected', 'held')),
  -- 'signed': straight to POST /v1/submissions; 'bridge': uploaded through the master.
  via text not null check (via in ('signed', 'bridge')),
  request_hash text,
  filename text not null,
  -- sha256 hex of the ZIP bytes (not of their base64: one ZIP, one hash).
  code_hash text not null check (code_hash ~ '^[0-9a-f]{64}$'),
  -- The ZIP itself. Never served back publicly: another miner would copy the best one.
  bundle bytea not null check (octet_length(bundle) <= 6 * 1024 * 1024),
  metadata jsonb not null default '{}' check (jsonb_typeof(metadata) = 'object'),
  -- A readable sentence for the miner when the bundle was refused or its run failed.
  error text,
  -- Computed by the challenge from the harness's measurements, never taken from miner output.
  final_score double precision,
  anti_cheat_multiplier double precision,
  bpb double precision,
  -- Legacy fields, kept for response-schema stability; the live path fills final_score only.
  q_arch double precision,
  q_recipe double precision,
  diversity_bonus double precision,
  penalty double precision,
  -- 'off' only when the operator set LLM_GATE=off: recorded on every bundle it let through.
  llm_gate text not null default 'required' check (llm_gate in ('required', 'off')),
  -- What each gate found (static report, duplicate match, LLM verdict): the audit trail.
  gate jsonb,
  -- The harness's run report as received (after validation).
  report jsonb,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  -- Set when the LLM gate could not decide; a held bundle older than 24 h becomes rejected.
  held_at timestamptz,
  scored_at timestamptz,
  check (status <> 'held' or held_at is not null)
);

create trigger submissions_touch before update on submissions
  for each row execute function scoring_touch_updated_at();

-- The leaderboard and the weights: completed bundles of an epoch, each hotkey's best first.
create index submissions_leaderboard on submissions (epoch_id, status, hotkey, final_score desc, created_at, id);
-- History (daily counts over a window) and the newest-first listings.
create index submissions_created on submissions (created_at);
-- Exact duplicates: the same ZIP submitted again.
create index submissions_code_hash on submissions (code_hash);
-- The 24 h expiry of held bundles.
create index submissions_held on submissions (held_at) where status = 'held';

-- Eval-job health rows (GET /v1/health/eval-jobs): one per submission and pipeline level
-- ('gates', 'llm', 'run'); the SDK's job queue does the claiming, these rows are what is shown.
create table eval_jobs (
  id bigint generated always as identity primary key,
  submission_id bigint not null references submissions (id) on delete cascade,
  level text not null check (level ~ '^[a-z][a-z0-9_]{0,31}$'),
  status text not null default 'pending'
    check (status in ('pending', 'running', 'completed', 'failed')),
  attempts integer not null default 0 check (attempts >= 0),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (submission_id, level)
);

create trigger eval_jobs_touch before update on eval_jobs
  for each row execute function scoring_touch_updated_at();

create index eval_jobs_recent on eval_jobs (created_at desc, id desc);

-- GPU leases, FIFO: queued -> active (a GPU index assigned) -> released. CPU runs hold none.
create table gpu_leases (
  id bigint generated always as identity primary key,
  submission_id bigint not null references submissions (id) on delete cascade,
  gpu_index integer check (gpu_index between 0 and 63),
  tier text not null default 'default' check (tier ~ '^[a-z0-9][a-z0-9_-]{0,31}$'),
  status text not null default 'queued' check (status in ('queued', 'active', 'released')),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  activated_at timestamptz,
  released_at timestamptz,
  check (status <> 'active' or (gpu_index is not null and activated_at is not null)),
  check (status <> 'released' or released_at is not null)
);

create trigger gpu_leases_touch before update on gpu_leases
  for each row execute function scoring_touch_updated_at();

-- One active lease per GPU, one live lease per submission: the database refuses a double grant.
create unique index gpu_leases_one_per_gpu on gpu_leases (gpu_index) where status = 'active';
create unique index gpu_leases_one_per_submission on gpu_leases (submission_id)
  where status <> 'released';
-- The FIFO of waiting leases, and the summary by status and tier.
create index gpu_leases_queue on gpu_leases (status, created_at, id);

-- LLM gate verdicts by (code hash, rules revision): a bundle re-run after an infrastructure
-- failure is not charged the screen twice. Only decisions (allow, deny) are cached; a 'held'
-- outcome (provider error, timeout, malformed verdict) never is.
create table llm_verdicts (
  code_hash text not null check (code_hash ~ '^[0-9a-f]{64}$'),
  rules_revision text not null,
  outcome text not null check (outcome in ('allow', 'deny')),
  verdict jsonb not null,
  model text not null,
  created_at timestamptz not null default now(),
  primary key (code_hash, rules_revision)
);

-- Near-duplicate fingerprints: token shingles, their MinHash signature and its LSH bands. The
-- GIN index on bands finds the candidates sharing a band without reading every earlier bundle.
create table bundle_fingerprints (
  submission_id bigint primary key references submissions (id) on delete cascade,
  version smallint not null,
  shingle_count integer not null check (shingle_count >= 0),
  -- Distinct shingle hashes, ascending, uint32 little-endian.
  shingles bytea not null,
  -- The MinHash signature, uint32 little-endian.
  minhash bytea not null,
  bands integer[] not null,
  created_at timestamptz not null default now()
);

create index bundle_fingerprints_bands on bundle_fingerprints using gin (bands);
