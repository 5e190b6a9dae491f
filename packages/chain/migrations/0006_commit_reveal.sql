-- Commit-reveal v4 (docs/chain.md): a validator on a subnet with CommitRevealWeightsEnabled sends
-- `commit_timelocked_weights` instead of `set_weights`, and the chain reveals the commit itself an
-- epoch or more later. Each commit is an attempt in `chain_weight_submissions` (kind 'commit'),
-- recorded before it is sent like any other, and then followed to its reveal:
--   committed   in a finalized block with TimelockedWeightsCommitted(who, netuid, hash, round)
--               and hash = blake2_256(commit); its reveal is awaited
--   revealed    TimelockedWeightsRevealed(netuid, who) in its reveal epoch, and the chain's
--               Weights for the validator's uid equal the committed vector (max-upscaled)
--   unrevealed  its reveal epoch ended without that: reveal_cause says what the chain shows
--               (pulse_missing, pulse_late, decryption_failed, payload_refused, dropped_at_reveal,
--               weights_differ, ambiguous, unverifiable); recommit_id names the commit that
--               carried the weights again
-- plus, as before, pending / in_block (open) and failed / dropped (never committed).
-- `validator_snapshots` keeps the last weights snapshot the validator verified (non-empty, not
-- all-burn, health gate passed), so a restart whose snapshot source fails submits that, never a
-- blank vector. Idempotent throughout: a validator pointed at the master's database applies this
-- file a second time under its own migration namespace.
alter table chain_weight_submissions
  add column if not exists kind text not null default 'set_weights'
    check (kind in ('set_weights', 'commit')),
  add column if not exists commit_hash text,
  add column if not exists reveal_round bigint,
  add column if not exists commit_epoch bigint,
  add column if not exists reveal_epoch bigint,
  add column if not exists beacon_public_key text,
  add column if not exists reveal_block_number bigint,
  add column if not exists reveal_block_hash text,
  add column if not exists reveal_cause text,
  add column if not exists reveal_detail text,
  add column if not exists recommit_id bigint;

alter table chain_weight_submissions drop constraint if exists chain_weight_submissions_status_check;
alter table chain_weight_submissions add constraint chain_weight_submissions_status_check
  check (status in (
    'pending', 'in_block', 'finalized', 'failed', 'dropped', 'committed', 'revealed', 'unrevealed'
  ));

-- The commits whose reveal is still awaited, read on every validator round.
create index if not exists chain_weight_submissions_awaiting_reveal
  on chain_weight_submissions (netuid, hotkey, id)
  where status = 'committed';

create table if not exists validator_snapshots (
  netuid integer not null check (netuid between 0 and 65535),
  hotkey text not null,
  snapshot_id bigint,
  snapshot jsonb not null,
  verified_at timestamptz not null default now(),
  primary key (netuid, hotkey)
);
