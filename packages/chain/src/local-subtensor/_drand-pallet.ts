import { sha256 } from "@noble/hashes/sha2.js";
import { blake2_256, u64le } from "./_bytes.js";
import type { ChainState } from "./_chain-state.js";
import type { LocalBeacon } from "./_local-beacon.js";
import { concatBytes } from "./_runtime.js";
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
 * Stores the pulses the beacon has published by `nowMs` and not yet stored, as `write_pulse`
 * does; a skipped round is left out, as finney leaves out a pulse that fails verification.
 * Returns the rounds written (for `Drand.NewPulse`).
 */
export function ingestPulses(state: ChainState, beacon: LocalBeacon, nowMs: number): bigint[] {
  const current = beacon.roundAt(nowMs);
  const stored = state.lastStoredRound();
  const oldest = state.oldestStoredRound();
  const firstStorage = stored === 0n && oldest === 0n;
  // First use: the worker starts from the newest round rather than replaying history.
  const from = stored === 0n ? (current > 0n ? current - 1n : 0n) : stored;
  if (current <= from) return [];
  const count = current - from < MAX_PULSES_PER_BLOCK ? current - from : MAX_PULSES_PER_BLOCK;
  const written: bigint[] = [];
  for (let round = from + 1n; round <= from + count; round++) {
    if (beacon.isSkipped(round)) continue;
    // The BLS signature is computed on the first read: most pulses are never read.
    const r = round;
    state.setPulse(
      r,
      deferredValue(concatBytes([new TextEncoder().encode("pulse"), u64le(r)]), () => {
        const signature = beacon.signature(r);
        return state.encodePulse(r, sha256(signature), signature);
      }),
    );
    written.push(r);
  }
  const last = written[written.length - 1];
  if (last === undefined) return [];
  state.setLastStoredRound(last);
  if (firstStorage) state.setOldestStoredRound(written[0] as bigint);
  prune(state, last);
  return written;
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
