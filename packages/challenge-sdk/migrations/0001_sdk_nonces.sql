-- One row per (hotkey, nonce) a signed request spent: the primary key makes reservation atomic
-- across replicas (insert ... on conflict do nothing). Rows older than 24 h are pruned; a
-- request that old is outside the 300 s signature window anyway.
create table sdk_nonces (
  hotkey text not null,
  nonce text not null,
  created_at timestamptz not null default now(),
  primary key (hotkey, nonce)
);

create index sdk_nonces_created_at on sdk_nonces (created_at);
