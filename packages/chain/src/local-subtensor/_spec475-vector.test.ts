import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { loadNamedRuntime, type Runtime } from "./_runtime.js";
import {
  loadSpec475Runtime,
  SPEC475_METADATA_PATH,
  SPEC475_METADATA_SHA256,
} from "./_test-spec475.js";

// Finney's spec-475 metadata checked against what the validator reads on spec 424. Findings, as of
// this vector: the storage items below keep their hashers, key and value types and defaults,
// `commit_timelocked_weights` keeps its index (7, 113) and arguments, and the 13 transaction
// extensions keep their order. What moved: SubtensorModule's event indices (new events ahead of
// them): `TimelockedWeightsCommitted` 107 -> 108, `TimelockedWeightsRevealed` 108 -> 109,
// `EpochDeferred` 132 -> 137, `EpochSkipped` 133 -> 138. The validator reads events by name
// through the block's own metadata, so it is unaffected; the local subtensor encodes them by name
// from the metadata it serves. What changed in form: the source published metadata V14 (spec
// 424's file here is V16); `_runtime.ts` reads V14's extension types from the original, since
// @polkadot/types' conversion to the latest shape drops them.

const STORAGE_THE_VALIDATOR_READS: [string, string][] = [
  ["SubtensorModule", "SubnetEpochIndex"],
  ["SubtensorModule", "LastEpochBlock"],
  ["SubtensorModule", "PendingEpochAt"],
  ["SubtensorModule", "BlocksSinceLastStep"],
  ["SubtensorModule", "TimelockedWeightCommits"],
  ["SubtensorModule", "RevealPeriodEpochs"],
  ["SubtensorModule", "Tempo"],
  ["Drand", "Pulses"],
  ["Drand", "LastStoredRound"],
];

const EVENTS_THE_VALIDATOR_READS = [
  "TimelockedWeightsCommitted",
  "TimelockedWeightsRevealed",
  "EpochDeferred",
  "EpochSkipped",
];

/** The readable type of a registry lookup name (`Lookup42` -> `u16`). */
function typeName(runtime: Runtime, lookup: string): string {
  return runtime.registry.lookup.getTypeDef(lookup as `Lookup${number}`).type;
}

/** A storage item's shape with lookup ids (which differ between metadata) resolved to types. */
function storageShape(runtime: Runtime, pallet: string, name: string) {
  const entry = runtime.storage(pallet, name);
  const typeOf = (lookup: string) => typeName(runtime, lookup);
  return {
    hashers: entry.hashers,
    keyTypes: entry.keyTypes.map(typeOf),
    valueType: typeOf(entry.valueType),
    fallback: Buffer.from(entry.fallback).toString("hex"),
    optional: entry.optional,
  };
}

function callArguments(runtime: Runtime, pallet: string, call: string) {
  const calls = runtime.metadata.asLatest.pallets
    .find((p) => p.name.toString() === pallet)
    ?.calls.unwrapOr(undefined);
  const variant =
    calls &&
    runtime.registry.lookup
      .getSiType(calls.type)
      .def.asVariant.variants.find((v) => v.name.toString() === call);
  if (!variant) throw new Error(`no call ${pallet}.${call}`);
  return variant.fields.map((f) => ({
    name: f.name.toString(),
    type: runtime.registry.lookup.getTypeDef(f.type).type,
  }));
}

function eventIndex(runtime: Runtime, pallet: string, event: string): number | undefined {
  const events = runtime.metadata.asLatest.pallets
    .find((p) => p.name.toString() === pallet)
    ?.events.unwrapOr(undefined);
  if (!events) return undefined;
  return runtime.registry.lookup
    .getSiType(events.type)
    .def.asVariant.variants.find((v) => v.name.toString() === event)
    ?.index.toNumber();
}

describe("finney spec-475 metadata (test vector)", () => {
  const spec475 = loadSpec475Runtime();
  const spec424 = loadNamedRuntime("spec424");

  it("is the published file: sha256, prefix and metadata V14", () => {
    const bytes = readFileSync(SPEC475_METADATA_PATH);
    expect(bytes.length).toBe(357_468);
    expect(createHash("sha256").update(bytes).digest("hex")).toBe(SPEC475_METADATA_SHA256);
    // `meta` magic, then the version byte.
    expect(bytes.subarray(0, 5).toString("hex")).toBe("6d6574610e");
    expect(spec475.metadata.version).toBe(14);
  });

  it("reports node-subtensor spec 475, transaction version 1, in System.Version", () => {
    expect(spec475.specName).toBe("node-subtensor");
    expect(spec475.specVersion).toBe(475);
    expect(spec475.transactionVersion).toBe(1);
    // Same transaction version as 424: signed payloads keep their layout.
    expect(spec475.transactionVersion).toBe(spec424.transactionVersion);
  });

  it("runs the counter epoch model", () => {
    expect(spec475.counterEpochs).toBe(true);
  });

  it.each(STORAGE_THE_VALIDATOR_READS)("keeps %s.%s as spec 424 has it", (pallet, name) => {
    expect(spec475.hasStorage(pallet, name)).toBe(true);
    expect(storageShape(spec475, pallet, name)).toEqual(storageShape(spec424, pallet, name));
  });

  it("keeps Tempo's default of 360 and RevealPeriodEpochs' of 1", () => {
    expect(storageShape(spec475, "SubtensorModule", "Tempo").fallback).toBe("6801");
    expect(storageShape(spec475, "SubtensorModule", "RevealPeriodEpochs").fallback).toBe(
      "0100000000000000",
    );
  });

  it("keeps SubtensorModule.commit_timelocked_weights: index and arguments", () => {
    expect(spec475.callIndex("SubtensorModule", "commit_timelocked_weights")).toEqual([7, 113]);
    expect(spec475.callIndex("SubtensorModule", "commit_timelocked_weights")).toEqual(
      spec424.callIndex("SubtensorModule", "commit_timelocked_weights"),
    );
    const args = callArguments(spec475, "SubtensorModule", "commit_timelocked_weights");
    expect(args.map((a) => a.name)).toEqual([
      "netuid",
      "commit",
      "reveal_round",
      "commit_reveal_version",
    ]);
    expect(args).toEqual(callArguments(spec424, "SubtensorModule", "commit_timelocked_weights"));
  });

  it("keeps the commit-reveal events by name, at moved indices", () => {
    const indices = (r: Runtime) =>
      Object.fromEntries(
        EVENTS_THE_VALIDATOR_READS.map((e) => [e, eventIndex(r, "SubtensorModule", e)]),
      );
    expect(indices(spec424)).toEqual({
      TimelockedWeightsCommitted: 107,
      TimelockedWeightsRevealed: 108,
      EpochDeferred: 132,
      EpochSkipped: 133,
    });
    expect(indices(spec475)).toEqual({
      TimelockedWeightsCommitted: 108,
      TimelockedWeightsRevealed: 109,
      EpochDeferred: 137,
      EpochSkipped: 138,
    });
  });

  it("reads each extension's implicit type from V14 as V16 states it for spec 424", () => {
    const implicit = (r: Runtime) =>
      r.extensions.map((e) => [e.identifier, typeName(r, e.implicitType), e.implicitEmpty]);
    expect(implicit(spec475)).toEqual(implicit(spec424));
  });

  it("keeps the 13 transaction extensions in spec 424's order", () => {
    const ids = (r: Runtime) => r.extensions.map((e) => e.identifier);
    expect(ids(spec475)).toHaveLength(13);
    expect(ids(spec475)).toEqual(ids(spec424));
  });
});
