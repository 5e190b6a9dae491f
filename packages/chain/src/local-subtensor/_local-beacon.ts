import { randomBytes } from "node:crypto";
import { beaconKeypair, DRAND_QUICKNET, signRound, toRound } from "../drand-beacon.js";
import { blake2_256, toHex } from "./_bytes.js";
import { concatBytes } from "./_runtime.js";

/** What `dev_drandInfo` answers, in the shape of drand's own `/info` (hex key without 0x). */
export interface DrandInfo {
  public_key: string;
  /** Unix seconds of round 1. */
  genesis_time: number;
  /** Seconds between rounds. */
  period: number;
}

/** Options of a local beacon. */
export interface LocalBeaconOptions {
  /** Any bytes; the same seed gives the same key. Random when omitted. */
  seed?: Uint8Array | undefined;
  /** Unix seconds of round 1; default quicknet's, so round numbers read like quicknet's. */
  genesisTime?: number;
  /** Seconds per round; default quicknet's 3. */
  period?: number;
}

// Signatures cost ~20 ms each; reveals ask for the same few rounds again and again.
const SIGNATURE_CACHE = 256;

/**
 * The local subtensor's own drand beacon: a BLS key on quicknet's scheme (signatures on G1,
 * key on G2) and quicknet's schedule. Round `r` is published at `genesis_time + (r - 1) ·
 * period`, as drand publishes it, so a round computed with bittensor-drand's formula has been
 * published by the block it aims for. Signing is on demand: only rounds someone reads cost work.
 */
export class LocalBeacon {
  readonly publicKey: Uint8Array;
  readonly genesisTime: number;
  readonly period: number;
  readonly #secretKey: Uint8Array;
  readonly #signatures = new Map<bigint, Uint8Array>();
  readonly #skipped = new Set<bigint>();

  constructor(options: LocalBeaconOptions = {}) {
    const seed = options.seed ?? new Uint8Array(randomBytes(32));
    // Domain-separated so a chain's genesis seed never doubles as its beacon's secret.
    const keys = beaconKeypair(
      blake2_256(concatBytes([new TextEncoder().encode("local-subtensor/drand"), seed])),
    );
    this.publicKey = keys.publicKey;
    this.#secretKey = keys.secretKey;
    this.genesisTime = options.genesisTime ?? DRAND_QUICKNET.genesisTime;
    this.period = options.period ?? DRAND_QUICKNET.periodSeconds;
    if (!(Number.isSafeInteger(this.genesisTime) && this.genesisTime >= 0)) {
      throw new RangeError("genesisTime must be whole seconds");
    }
    if (!(Number.isSafeInteger(this.period) && this.period > 0)) {
      throw new RangeError("period must be a positive whole number of seconds");
    }
  }

  /** `{public_key, genesis_time, period}` as drand's `/info` spells them. */
  info(): DrandInfo {
    return {
      public_key: toHex(this.publicKey).slice(2),
      genesis_time: this.genesisTime,
      period: this.period,
    };
  }

  /** The newest round published at `timeMs` (Unix ms); 0 before round 1. */
  roundAt(timeMs: number): bigint {
    const since = timeMs - this.genesisTime * 1000;
    if (since < 0) return 0n;
    return BigInt(Math.floor(since / (this.period * 1000))) + 1n;
  }

  /** The Unix ms at which `round` (≥ 1) is published. */
  roundTime(round: bigint | number): number {
    return this.genesisTime * 1000 + (Number(toRound(round)) - 1) * this.period * 1000;
  }

  /** From now on `round` is never published (`dev_skipDrandRound`). */
  skip(round: bigint): void {
    this.#skipped.add(toRound(round));
  }

  /** Whether `round` was skipped. */
  isSkipped(round: bigint): boolean {
    return this.#skipped.has(round);
  }

  /** The beacon's 48-byte signature of `round`, as a drand pulse carries it. */
  signature(round: bigint | number): Uint8Array {
    const r = toRound(round);
    let signature = this.#signatures.get(r);
    if (!signature) {
      signature = signRound(this.#secretKey, r);
      if (this.#signatures.size >= SIGNATURE_CACHE) {
        const oldest = this.#signatures.keys().next().value as bigint;
        this.#signatures.delete(oldest);
      }
      this.#signatures.set(r, signature);
    }
    return signature;
  }
}
