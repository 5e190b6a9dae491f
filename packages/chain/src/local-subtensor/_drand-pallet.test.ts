import { describe, expect, it } from "vitest";
import { verifyRoundSignature } from "../drand-beacon.js";
import { ChainState } from "./_chain-state.js";
import { ingestPulses, MAX_KEPT_PULSES, writeBeaconConfig } from "./_drand-pallet.js";
import { LocalBeacon } from "./_local-beacon.js";
import { loadNamedRuntime } from "./_runtime.js";
import { VersionedStore } from "./_versioned-store.js";

const runtime = loadNamedRuntime("spec393");

class CountingBeacon extends LocalBeacon {
  signed = 0;
  override signature(round: bigint | number): Uint8Array {
    this.signed += 1;
    return super.signature(round);
  }
}

function setup() {
  const store = new VersionedStore(100);
  store.begin(0);
  const state = new ChainState(runtime, store);
  const beacon = new CountingBeacon({ seed: new Uint8Array([1]), genesisTime: 1000, period: 3 });
  return { store, state, beacon, at: (round: number) => beacon.roundTime(BigInt(round)) };
}

describe("the Drand pallet's storage, as write_pulse keeps it", () => {
  it("starts at the newest round, then stores every round since, at most 50 a block", () => {
    const { store, state, beacon, at } = setup();
    expect(ingestPulses(state, beacon, at(500))).toEqual([500n]);
    expect(state.lastStoredRound()).toBe(500n);
    expect(state.oldestStoredRound()).toBe(500n);
    store.begin(1);
    expect(ingestPulses(state, beacon, at(500) + 2999)).toEqual([]);
    expect(ingestPulses(state, beacon, at(504))).toEqual([501n, 502n, 503n, 504n]);
    store.begin(2);
    const many = ingestPulses(state, beacon, at(700));
    expect(many).toHaveLength(50);
    expect(many[49]).toBe(554n);
    expect(state.oldestStoredRound()).toBe(500n);
  });

  it("leaves skipped rounds out and signs a pulse only when it is read", () => {
    const { state, beacon, at } = setup();
    beacon.skip(12n);
    ingestPulses(state, beacon, at(10));
    expect(ingestPulses(state, beacon, at(13))).toEqual([11n, 13n]);
    expect(state.hasPulse(12n)).toBe(false);
    expect(state.lastStoredRound()).toBe(13n);
    expect(beacon.signed).toBe(0);
    const signature = state.pulseSignature(11n) as Uint8Array;
    expect(verifyRoundSignature(beacon.publicKey, 11n, signature)).toBe(true);
    const pulse = state
      .read("Drand", "Pulses", [new Uint8Array([11, 0, 0, 0, 0, 0, 0, 0])])
      .toJSON() as {
      round: number;
      randomness: string;
    };
    expect(pulse.round).toBe(11);
    expect(pulse.randomness).toMatch(/^0x[0-9a-f]{64}$/);
    expect(beacon.signed).toBe(1);
    expect(state.pulseSignature(12n)).toBeUndefined();
  });

  it("prunes to MAX_KEPT_PULSES rounds, 100 a block", () => {
    const { state, beacon, at } = setup();
    ingestPulses(state, beacon, at(3));
    state.setLastStoredRound(MAX_KEPT_PULSES + 150n);
    ingestPulses(state, beacon, at(Number(MAX_KEPT_PULSES) + 151));
    expect(state.oldestStoredRound()).toBe(103n);
    expect(state.hasPulse(3n)).toBe(false);
  });

  it("describes the local beacon in BeaconConfig", () => {
    const { state, beacon } = setup();
    writeBeaconConfig(state, beacon);
    const config = state.read("Drand", "BeaconConfig").toJSON() as Record<string, unknown>;
    expect(config.publicKey).toBe(`0x${beacon.info().public_key}`);
    expect(config.period).toBe(3);
    expect(config.genesisTime).toBe(1000);
    expect(config.hash).toMatch(/^0x[0-9a-f]{64}$/);
  });
});
