import { DRAND_QUICKNET } from "./drand-beacon.js";
import { type CounterEpochState, predictFirstRevealBlock } from "./rules/counter-epoch.js";

// The plaintext of a commit-reveal v4 commit and the drand round it is locked to: the two values
// `commit_timelocked_(mechanism_)weights` needs besides netuid. The struct is subtensor's
// `WeightsTlockPayload` (pallets/subtensor/src/coinbase/reveal_commits.rs, freeze_struct
// b6833b5029be4127), plain SCALE in field order.

/** What the chain decrypts at reveal time and then sets as the hotkey's weights. */
export interface WeightsTlockPayload {
  /** The committing hotkey's raw 32-byte public key; the chain rejects the reveal unless it is the signer. */
  hotkey: Uint8Array;
  /** Destination uids, each a u16. */
  uids: readonly number[];
  /** u16 weight per uid, same length as `uids`. */
  values: readonly number[];
  /** The subnet's weights version key (u64). */
  versionKey: bigint | number;
}

/** A decoded payload; `versionKey` always comes back as a bigint. */
export interface DecodedWeightsTlockPayload extends WeightsTlockPayload {
  versionKey: bigint;
}

const HOTKEY_LENGTH = 32;
const U16_MAX = 0xffff;
const U64_MAX = (1n << 64n) - 1n;
// SCALE compact four-byte mode tops out below 2^30; longer vectors cannot fit in a block anyway.
const COMPACT_MAX = 2 ** 30 - 1;

/**
 * SCALE-encode a payload: Vec<u8> hotkey, Vec<u16> uids, Vec<u16> values (compact lengths,
 * little-endian items), u64 version key. Throws RangeError for a hotkey that is not 32 bytes,
 * uids and values of different lengths, or an out-of-range number, since the chain would drop
 * such a reveal silently.
 * @example encodeWeightsTlockPayload({ hotkey, uids: [0, 1], values: [65535, 0], versionKey: 0 })
 */
export function encodeWeightsTlockPayload(payload: WeightsTlockPayload): Uint8Array {
  const { hotkey, uids, values } = payload;
  if (hotkey.length !== HOTKEY_LENGTH)
    throw new RangeError(`hotkey must be the raw ${HOTKEY_LENGTH}-byte public key`);
  if (uids.length !== values.length)
    throw new RangeError(`uids (${uids.length}) and values (${values.length}) differ in length`);
  const versionKey = toU64(payload.versionKey);
  const out: number[] = [];
  pushCompact(out, hotkey.length);
  out.push(...hotkey);
  for (const [name, list] of [
    ["uids", uids],
    ["values", values],
  ] as const) {
    pushCompact(out, list.length);
    for (const item of list) {
      if (!Number.isInteger(item) || item < 0 || item > U16_MAX)
        throw new RangeError(`${name} must be u16 integers, got ${item}`);
      out.push(item & 0xff, item >> 8);
    }
  }
  const tail = new Uint8Array(8);
  new DataView(tail.buffer).setBigUint64(0, versionKey, true);
  out.push(...tail);
  return Uint8Array.from(out);
}

/**
 * Decode a SCALE payload, refusing truncation, trailing bytes, non-canonical compact lengths,
 * a hotkey that is not 32 bytes and mismatched uid/value counts (RangeError).
 */
export function decodeWeightsTlockPayload(bytes: Uint8Array): DecodedWeightsTlockPayload {
  let offset = 0;
  const need = (length: number, what: string) => {
    if (length > bytes.length - offset) throw new RangeError(`payload truncated in ${what}`);
  };
  const compact = (what: string): number => {
    need(1, what);
    const mode = bytes[offset]! & 3;
    if (mode === 3) throw new RangeError(`${what} length is implausibly large`);
    const size = [1, 2, 4][mode]!;
    need(size, what);
    let value = 0;
    for (let i = size - 1; i >= 0; i--) value = value * 256 + bytes[offset + i]!;
    value = Math.floor(value / 4);
    offset += size;
    // parity-scale-codec refuses a length that a shorter mode could have held; so do we.
    const min = [0, 64, 2 ** 14][mode]!;
    if (value < min) throw new RangeError(`${what} length is not canonically encoded`);
    return value;
  };
  const hotkeyLength = compact("hotkey");
  if (hotkeyLength !== HOTKEY_LENGTH)
    throw new RangeError(`hotkey must be ${HOTKEY_LENGTH} bytes, got ${hotkeyLength}`);
  need(HOTKEY_LENGTH, "hotkey");
  const hotkey = bytes.slice(offset, offset + HOTKEY_LENGTH);
  offset += HOTKEY_LENGTH;
  const u16s = (what: string): number[] => {
    const count = compact(what);
    need(2 * count, what);
    const list = Array.from({ length: count }, (_, i) => {
      return bytes[offset + 2 * i]! | (bytes[offset + 2 * i + 1]! << 8);
    });
    offset += 2 * count;
    return list;
  };
  const uids = u16s("uids");
  const values = u16s("values");
  if (uids.length !== values.length)
    throw new RangeError(`uids (${uids.length}) and values (${values.length}) differ in length`);
  need(8, "version_key");
  const versionKey = new DataView(bytes.buffer, bytes.byteOffset + offset, 8).getBigUint64(0, true);
  offset += 8;
  if (offset !== bytes.length)
    throw new RangeError(`${bytes.length - offset} trailing bytes after the payload`);
  return { hotkey, uids, values, versionKey };
}

/** Inputs of {@link revealRound}, all in the chain's units. */
export interface RevealRoundInput {
  /** The block the commit is built at. */
  currentBlock: number;
  /** The netuid storage index: `mecid * 4096 + netuid` for a mechanism commit. */
  netuid: number;
  /** The subnet's Tempo. */
  tempo: number;
  /** The subnet's RevealPeriodEpochs. */
  revealPeriodEpochs: number;
  /** Seconds per block (12 on finney). */
  blockTimeSeconds: number;
  /** Wall-clock Unix time in seconds (may be fractional). */
  nowSeconds: number;
  /** Beacon genesis time (quicknet's by default). */
  genesisTime?: number;
  /** Beacon period in seconds (quicknet's 3 by default). */
  period?: number;
}

/** Blocks past the reveal epoch's first block that the target pulse aims for, as bittensor-drand does. */
export const SECURITY_BLOCK_OFFSET = 3;

/**
 * The drand round to lock a commit to, as bittensor-drand 1.2 `generate_commit` computes it for
 * the block-number epoch model (spec 393): aim for the pulse due 3 blocks into the reveal epoch,
 * rounding the round down so it has been ingested by then, and never below 1.
 * @example revealRound({ currentBlock: 1000, netuid: 1, tempo: 100, revealPeriodEpochs: 2, blockTimeSeconds: 12, nowSeconds })
 */
export function revealRound(input: RevealRoundInput): number {
  const {
    currentBlock,
    netuid,
    tempo,
    revealPeriodEpochs,
    blockTimeSeconds,
    nowSeconds,
    genesisTime = DRAND_QUICKNET.genesisTime,
    period = DRAND_QUICKNET.periodSeconds,
  } = input;
  for (const [name, value] of Object.entries({ currentBlock, netuid, tempo, revealPeriodEpochs }))
    if (!Number.isSafeInteger(value) || value < 0)
      throw new RangeError(`${name} must be a non-negative integer, got ${value}`);
  for (const [name, value] of Object.entries({ blockTimeSeconds, nowSeconds, genesisTime }))
    if (!Number.isFinite(value)) throw new RangeError(`${name} must be finite, got ${value}`);
  if (!(period > 0)) throw new RangeError(`period must be positive, got ${period}`);
  const tempoPlusOne = tempo + 1;
  const netuidPlusOne = netuid + 1;
  const currentEpoch = Math.floor((currentBlock + netuidPlusOne) / tempoPlusOne);
  const revealEpoch = currentEpoch + revealPeriodEpochs;
  // The Rust uses saturating u64 arithmetic; clamping at 0 reproduces it.
  const firstRevealBlock = Math.max(0, revealEpoch * tempoPlusOne - netuidPlusOne);
  return roundForBlock(
    firstRevealBlock,
    currentBlock,
    blockTimeSeconds,
    nowSeconds,
    genesisTime,
    period,
  );
}

/** Inputs of {@link revealRoundV2}: the counter model's state at the block the commit is built at. */
export interface RevealRoundV2Input {
  /** `SubnetEpochIndex`, `LastEpochBlock`, `PendingEpochAt`, `BlocksSinceLastStep`, `Tempo` at `state.block`. */
  state: CounterEpochState;
  /** The subnet's RevealPeriodEpochs. */
  revealPeriodEpochs: number;
  /** Seconds per block (12 on finney). */
  blockTimeSeconds: number;
  /** Unix time in seconds (may be fractional). */
  nowSeconds: number;
  /** Beacon genesis time (quicknet's by default). */
  genesisTime?: number;
  /** Beacon period in seconds (quicknet's 3 by default). */
  period?: number;
}

/**
 * The drand round to lock a commit to on the counter epoch model (spec 423 on), as
 * bittensor-drand 2.0 `generate_commit_v2` computes it: the chain's first reveal block for a
 * commit included in the next block (simulated from the subnet's epoch state), plus 3 blocks,
 * converted to the round due then, rounded down, never below 1. RangeError for a tempo of 0.
 */
export function revealRoundV2(input: RevealRoundV2Input): number {
  const { state, revealPeriodEpochs, blockTimeSeconds, nowSeconds } = input;
  const genesisTime = input.genesisTime ?? DRAND_QUICKNET.genesisTime;
  const period = input.period ?? DRAND_QUICKNET.periodSeconds;
  for (const [name, value] of Object.entries({ ...state, revealPeriodEpochs }))
    if (!Number.isSafeInteger(value) || value < 0)
      throw new RangeError(`${name} must be a non-negative integer, got ${value}`);
  for (const [name, value] of Object.entries({ blockTimeSeconds, nowSeconds, genesisTime }))
    if (!Number.isFinite(value)) throw new RangeError(`${name} must be finite, got ${value}`);
  if (!(period > 0)) throw new RangeError(`period must be positive, got ${period}`);
  const firstRevealBlock = predictFirstRevealBlock(state, revealPeriodEpochs);
  return roundForBlock(
    firstRevealBlock,
    state.block,
    blockTimeSeconds,
    nowSeconds,
    genesisTime,
    period,
  );
}

// Both formulas end the same way: aim SECURITY_BLOCK_OFFSET blocks past the first reveal block,
// at `blockTime` seconds a block from now, and take the round due then, rounded down.
function roundForBlock(
  firstRevealBlock: number,
  currentBlock: number,
  blockTimeSeconds: number,
  nowSeconds: number,
  genesisTime: number,
  period: number,
): number {
  const blocksUntil = Math.max(0, firstRevealBlock + SECURITY_BLOCK_OFFSET - currentBlock);
  const targetSeconds = nowSeconds + blocksUntil * blockTimeSeconds;
  return Math.max(1, Math.floor((targetSeconds - genesisTime) / period));
}

function pushCompact(out: number[], length: number): void {
  if (length > COMPACT_MAX) throw new RangeError(`vector of ${length} items is too long`);
  if (length < 64) out.push(length << 2);
  else if (length < 2 ** 14) out.push(((length << 2) | 1) & 0xff, length >> 6);
  else {
    const v = length * 4 + 2;
    out.push(v & 0xff, (v >>> 8) & 0xff, (v >>> 16) & 0xff, (v >>> 24) & 0xff);
  }
}

function toU64(value: bigint | number): bigint {
  if (typeof value === "number" && !Number.isSafeInteger(value))
    throw new RangeError(`versionKey must be an integer, got ${value}`);
  const big = BigInt(value);
  if (big < 0n || big > U64_MAX) throw new RangeError(`versionKey must fit in a u64, got ${value}`);
  return big;
}
