-- Nonces of signed submission uploads the proxy accepted. The primary key makes the reservation
-- atomic (insert ... on conflict do nothing): of two requests with one (hotkey, nonce), exactly
-- one inserts a row, on one replica or many. Rows only need to outlive the signature window
-- (300 s either way); they are pruned after 24 h.
create table submission_nonces (
  hotkey text not null,
  nonce text not null,
  created_at timestamptz not null default now(),
  primary key (hotkey, nonce)
);

create index submission_nonces_created_at_idx on submission_nonces (created_at);
