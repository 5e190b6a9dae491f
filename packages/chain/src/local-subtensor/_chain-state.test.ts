import { describe, expect, it } from "vitest";
import { ChainState, HYPERPARAMETERS, PLAIN_HYPERPARAMETERS } from "./_chain-state.js";
import { loadNamedRuntime } from "./_runtime.js";
import { VersionedStore } from "./_versioned-store.js";

const runtime = loadNamedRuntime("spec393");

function fresh() {
  const store = new VersionedStore(100);
  store.begin(1);
  return new ChainState(runtime, store);
}

describe("chain state over the metadata's storage types", () => {
  it.each(["spec393", "spec424"] as const)(
    "gives each hyperparameter the %s metadata's value type",
    (spec) => {
      const metadata = loadNamedRuntime(spec);
      for (const [name, kind] of Object.entries(HYPERPARAMETERS)) {
        // MaxEpochsPerBlock came with the epoch counter.
        if (!metadata.hasStorage("SubtensorModule", name)) {
          expect([spec, name]).toEqual(["spec393", "MaxEpochsPerBlock"]);
          continue;
        }
        const entry = metadata.storage("SubtensorModule", name);
        expect(metadata.registry.lookup.getTypeDef(Number(entry.valueType.slice(6))).type).toBe(
          kind,
        );
        // Keyed by netuid, except the chain-wide ones.
        expect(entry.hashers.length).toBe(PLAIN_HYPERPARAMETERS.has(name) ? 0 : 1);
      }
    },
  );

  it("writes LastUpdate and ValidatorPermit bytes that polkadot-js decodes the same", () => {
    const state = fresh();
    const keys = Array.from({ length: 3 }, (_, i) => new Uint8Array(32).fill(i + 1));
    state.createSubnet(3, 360, {});
    expect(keys.map((k, i) => state.appendNeuron(3, k, i !== 1, 10 + i))).toEqual([0, 1, 2]);
    state.storeWeights(3, 2, [[0, 65535]], true, 99);
    state.storeWeights(3, 7, [[0, 65535]], true, 99); // no uid 7: LastUpdate stays as it is
    const lastUpdate = state.read("SubtensorModule", "LastUpdate", [3]).toJSON();
    expect(lastUpdate).toEqual([10, 11, 99]);
    expect(state.read("SubtensorModule", "ValidatorPermit", [3]).toJSON()).toEqual([
      true,
      false,
      true,
    ]);
    expect(state.lastUpdate(3, 1)).toBe(11n);
    expect(state.lastUpdate(3, 9)).toBe(0n);
    expect(state.validatorPermit(3, 1)).toBe(false);
    expect(state.validatorPermit(3, 2)).toBe(true);
    expect(state.subnetworkN(3)).toBe(3);
    expect(state.uidOf(3, keys[2] as Uint8Array)).toBe(2);
    expect(state.uidExists(3, 2)).toBe(true);
    expect(state.uidExists(3, 3)).toBe(false);
    // Registering the same hotkey again keeps its uid (and takes the new permit).
    expect(state.appendNeuron(3, keys[1] as Uint8Array, true, 20)).toBe(1);
    expect(state.validatorPermit(3, 1)).toBe(true);
  });

  it("reads the metadata's defaults for keys never written", () => {
    const state = fresh();
    expect(state.commitRevealEnabled(42)).toBe(true);
    expect(state.weightsSetRateLimit(42)).toBe(100n);
    expect(state.maxWeightsLimit(42)).toBe(65535);
    expect(state.minAllowedWeights(42)).toBe(1024);
    expect(state.mechanismCount(42)).toBe(1);
    expect(state.tempo(42)).toBe(360);
    expect(state.subnetExists(42)).toBe(false);
    expect(state.nonce(new Uint8Array(32).fill(9))).toBe(0);
  });

  it("validates hyperparameter names and values, u64 beyond 2^53 included", () => {
    const state = fresh();
    state.setHyperparameter(4, "WeightsVersionKey", "18446744073709551615");
    expect(state.weightsVersionKey(4)).toBe(18446744073709551615n);
    expect(() => state.setHyperparameter(4, "Tempo", 70000)).toThrow(/u16/);
    expect(() => state.setHyperparameter(4, "CommitRevealWeightsEnabled", 1)).toThrow(/boolean/);
    expect(() => state.setHyperparameter(4, "Kappa", 1)).toThrow(/unknown hyperparameter/);
    expect(() => state.setHyperparameter(4, "MinAllowedWeights", -1)).toThrow(/non-negative/);
  });
});
