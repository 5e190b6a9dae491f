-- Every set_weights attempt a validator made (the master's in-process validator, or a standalone
-- `platform validator run` on its own database, which applies only this file). A row is written,
-- in status `pending` with the signed extrinsic's hash, BEFORE the extrinsic is sent, so a crash
-- at any point leaves a row to reconcile against the chain instead of a lost attempt.
--   pending    signed and (maybe) sent; not seen in a block yet
--   in_block   seen in a best block (may still be retracted)
--   finalized  in a finalized block, with ExtrinsicSuccess and WeightsSet(netuid, uid)
--   failed     refused by the pool (error_code 1010...) or failed in a finalized block
--              (error_code 'module' and the decoded SubtensorModule error in error_name)
--   dropped    never included: its era ended, its nonce was used by another extrinsic, or the
--              pool dropped it
-- `if not exists` throughout: a validator pointed at the master's own database applies this
-- file under its own migration namespace and must find the table already there.
create table if not exists chain_weight_submissions (
  id bigserial primary key,
  snapshot_id bigint,
  netuid integer not null check (netuid between 0 and 65535),
  hotkey text not null,
  uid integer check (uid between 0 and 65535),
  built_block_number bigint not null,
  built_block_hash text not null,
  extrinsic_hash text not null,
  nonce bigint not null,
  era_birth bigint not null,
  era_death bigint not null,
  in_block_number bigint,
  in_block_hash text,
  finalized_block_number bigint,
  finalized_block_hash text,
  status text not null check (status in ('pending', 'in_block', 'finalized', 'failed', 'dropped')),
  error_code text,
  error_name text,
  error_message text,
  uids jsonb not null,
  weights_u16 jsonb not null,
  version_key numeric(20, 0) not null check (version_key >= 0),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

-- At most one open attempt per hotkey and subnet: a second validator process on the same
-- database (or a restarted one) must reconcile the open attempt before it may send again.
create unique index if not exists chain_weight_submissions_one_open
  on chain_weight_submissions (netuid, hotkey)
  where status in ('pending', 'in_block');

create index if not exists chain_weight_submissions_recent
  on chain_weight_submissions (netuid, hotkey, id desc);
