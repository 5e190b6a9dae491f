import { sha256 } from "@noble/hashes/sha2.js";
import { sr25519PairFromSeed, sr25519Sign } from "@polkadot/util-crypto";
import { blake2_256, toHex, u64le } from "./_bytes.js";
import type { ChainState } from "./_chain-state.js";
import { bareExtrinsic } from "./_extrinsic.js";
import type { LocalBeacon } from "./_local-beacon.js";
import { concatBytes, type Runtime } from "./_runtime.js";
import { deferredValue } from "./_versioned-store.js";

// The Drand pallet as finney runs it (pallets/drand/src/lib.rs, tag v3.3.13-393): its offchain
// worker fetches the rounds published since `LastStoredRound` (at most 50 a block; on first use
// only the newest) and `write_pulse` stores each, raises `LastStoredRound` to the last one
// written, sets `OldestStoredRound` on the first write and prunes to a week of rounds.

/** `MAX_PULSES_TO_FETCH`: rounds one block ingests at most. */
export const MAX_PULSES_PER_BLOCK = 50n;
/** `MAX_KEPT_PULSES`: a week of 3-second rounds. */
export const MAX_KEPT_PULSES = 216_000n;
/** `MAX_REMOVED_PULSES`: pruning per block. */
const MAX_REMOVED_PULSES = 100;

/** Writes `Drand.BeaconConfig` with the local beacon (finney's holds quicknet's). */
export function writeBeaconConfig(state: ChainState, beacon: LocalBeacon): void {
  const chainHash = blake2_256(
    concatBytes([new TextEncoder().encode("local-drand"), beacon.publicKey]),
  );
  state.setBeaconConfig({
    publicKey: beacon.publicKey,
    period: beacon.period,
    genesisTime: beacon.genesisTime,
    hash: chainHash,
    groupHash: chainHash,
    schemeId: "bls-unchained-g1-rfc9380",
    beaconId: "local-subtensor",
  });
}

/**
 * The rounds the offchain worker fetches when it runs at `nowMs`: those the beacon has
 * published and the chain has not stored, at most 50 (on first use only the newest); a skipped
 * round is left out, as finney leaves out a pulse that fails verification.
 */
export function roundsToFetch(state: ChainState, beacon: LocalBeacon, nowMs: number): bigint[] {
  const current = beacon.roundAt(nowMs);
  const stored = state.lastStoredRound();
  // First use: the worker starts from the newest round rather than replaying history.
  const from = stored === 0n ? (current > 0n ? current - 1n : 0n) : stored;
  if (current <= from) return [];
  const count = current - from < MAX_PULSES_PER_BLOCK ? current - from : MAX_PULSES_PER_BLOCK;
  const rounds: bigint[] = [];
  for (let round = from + 1n; round <= from + count; round++) {
    if (!beacon.isSkipped(round)) rounds.push(round);
  }
  return rounds;
}

/**
 * `write_pulse` for `rounds` (ascending, each above `LastStoredRound`): stores each pulse,
 * raises `LastStoredRound`, sets `OldestStoredRound` on the first storage and prunes.
 */
export function writePulses(state: ChainState, beacon: LocalBeacon, rounds: bigint[]): void {
  const last = rounds[rounds.length - 1];
  if (last === undefined) return;
  const firstStorage = state.lastStoredRound() === 0n && state.oldestStoredRound() === 0n;
  for (const r of rounds) {
    // The BLS signature is computed on the first read: most pulses are never read.
    state.setPulse(
      r,
      deferredValue(concatBytes([new TextEncoder().encode("pulse"), u64le(r)]), () => {
        const signature = beacon.signature(r);
        return state.encodePulse(r, sha256(signature), signature);
      }),
    );
  }
  state.setLastStoredRound(last);
  if (firstStorage) state.setOldestStoredRound(rounds[0] as bigint);
  prune(state, last);
}

/**
 * Stores the pulses the beacon has published by `nowMs` and not yet stored in one go (spec
 * 393's timing here: during the block's initialization). Returns the rounds written.
 */
export function ingestPulses(state: ChainState, beacon: LocalBeacon, nowMs: number): bigint[] {
  const rounds = roundsToFetch(state, beacon, nowMs);
  writePulses(state, beacon, rounds);
  return rounds;
}

// prune_old_pulses: keep the newest MAX_KEPT_PULSES rounds, removing at most 100 per block.
function prune(state: ChainState, last: bigint): void {
  let oldest = state.oldestStoredRound();
  let removed = 0;
  while (last - oldest + 1n > MAX_KEPT_PULSES && removed < MAX_REMOVED_PULSES) {
    state.setPulse(oldest, null);
    oldest += 1n;
    removed += 1;
  }
  if (removed > 0) state.setOldestStoredRound(oldest);
}

/** The key the local offchain worker signs its `write_pulse` payloads with. */
export interface PulseWorker {
  publicKey: Uint8Array;
  secretKey: Uint8Array;
}

/** The local drand worker's sr25519 key, derived from the chain's genesis seed. */
export function pulseWorker(seed: Uint8Array): PulseWorker {
  return sr25519PairFromSeed(
    blake2_256(concatBytes([new TextEncoder().encode("local-subtensor/drand-worker"), seed])),
  );
}

/**
 * The unsigned `Drand.write_pulse` extrinsic for one round, as finney's offchain worker sends it
 * (spec 424, pallets/drand `fetch_drand_pulse_and_send_unsigned`: one pulse per transaction, its
 * `PulsesPayload {block_number, pulses, public}` signed by the worker's key).
 */
export function writePulseExtrinsic(
  runtime: Runtime,
  beacon: LocalBeacon,
  worker: PulseWorker,
  blockNumber: number,
  round: bigint,
): Uint8Array {
  const signature = beacon.signature(round);
  const call = runtime.registry.findMetaCall(
    new Uint8Array(runtime.callIndex("Drand", "write_pulse")),
  );
  const payload = runtime.registry.createType(call.meta.args[0]?.type.toString() ?? "", {
    blockNumber,
    // Bytes as hex: a Uint8Array would be read as already length-prefixed.
    pulses: [{ round, randomness: toHex(sha256(signature)), signature: toHex(signature) }],
    public: { Sr25519: worker.publicKey },
  });
  const signed = sr25519Sign(payload.toU8a(), worker);
  return bareExtrinsic(call(payload, { Sr25519: signed }).toU8a());
}
