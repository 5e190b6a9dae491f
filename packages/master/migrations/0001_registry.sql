-- The challenge registry. Tokens are never stored: only the salt they are derived from (useless
-- without the master key), their sha256 hash (to check a presented token) and a display hint.
create table challenges (
  slug text primary key,
  name text not null,
  image text not null,
  version text not null,
  emission_percent double precision not null default 0
    check (emission_percent >= 0 and emission_percent <= 100),
  status text not null default 'draft'
    check (status in ('active', 'inactive', 'disabled', 'draft')),
  status_reason text,
  description text,
  api_version text not null default '1.0',
  internal_base_url text,
  required_capabilities jsonb not null default '["get_weights", "proxy_routes"]',
  resources jsonb not null default '{}',
  volumes jsonb not null default '{}',
  env jsonb not null default '{}',
  secrets jsonb not null default '{}',
  metadata jsonb not null default '{}',
  challenge_token_salt text not null,
  challenge_token_hash text not null,
  challenge_token_hint text not null,
  broker_token_salt text not null,
  broker_token_hash text not null,
  broker_token_hint text not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

create index challenges_status_idx on challenges (status);

-- Every lifecycle move, for the admin pages and for operators asking "who disabled this?".
create table challenge_events (
  id bigserial primary key,
  slug text not null references challenges (slug) on delete cascade,
  kind text not null,
  detail jsonb not null default '{}',
  created_at timestamptz not null default now()
);

create index challenge_events_slug_idx on challenge_events (slug, id desc);
