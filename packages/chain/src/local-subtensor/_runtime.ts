import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Metadata, TypeRegistry } from "@polkadot/types";
import type { RuntimeVersion, SiLookupTypeId } from "@polkadot/types/interfaces";
import type { Codec } from "@polkadot/types/types";
import { u8aToHex } from "@polkadot/util";

/**
 * The runtimes the local chain can serve, each finney's real metadata (V16) shipped in data/:
 * spec 393 (the block-number epoch formula) and spec 424 (the `SubnetEpochIndex` counter, pool
 * rejections, `write_pulse` in a later block). The default is the newer one.
 */
export const RUNTIME_FILES = {
  spec393: "finney-spec393-metadata-v16.scale",
  spec424: "finney-spec424-metadata-v16.scale",
} as const;

/** A runtime the local chain can serve. */
export type RuntimeName = keyof typeof RUNTIME_FILES;

/** The runtime served unless told otherwise. */
export const DEFAULT_RUNTIME: RuntimeName = "spec424";

/** The metadata file of the default runtime. */
export const METADATA_FILE = RUNTIME_FILES[DEFAULT_RUNTIME];

/** Checks a runtime name (`spec393`, `spec424`). */
export function runtimeName(value: unknown): RuntimeName {
  if (typeof value === "string" && Object.hasOwn(RUNTIME_FILES, value)) return value as RuntimeName;
  throw new Error(`runtime must be one of ${Object.keys(RUNTIME_FILES).join(", ")}`);
}

/** Loads one of the shipped runtimes by name. */
export function loadNamedRuntime(name: RuntimeName): Runtime {
  return loadRuntime(findChainDataFile(RUNTIME_FILES[name]));
}

/** One storage item as the metadata describes it. */
export interface StorageEntry {
  pallet: string;
  name: string;
  /** Hasher names in key order, e.g. `["Identity", "Blake2_128Concat"]`; empty for a plain item. */
  hashers: string[];
  /** A registry type name for each key part (lookup names, e.g. `Lookup40`). */
  keyTypes: string[];
  /** A registry type name for the value. */
  valueType: string;
  /** The SCALE bytes a read of an absent key yields (the metadata's default). */
  fallback: Uint8Array;
  optional: boolean;
}

/** One transaction extension, in the order the metadata lists them. */
export interface TransactionExtension {
  identifier: string;
  /** Registry type name of the part carried in the extrinsic. */
  explicitType: string;
  /** Registry type name of the part only the signing payload carries. */
  implicitType: string;
  /** True when the implicit part encodes to zero bytes. */
  implicitEmpty: boolean;
}

/** Pallet and variant indices of a module error, ready for `DispatchError::Module`. */
export interface ModuleErrorIndex {
  pallet: string;
  name: string;
  index: number;
  variant: number;
}

/** The finney runtime, decoded once: registry, metadata bytes and lookups by name. */
export interface Runtime {
  registry: TypeRegistry;
  metadata: Metadata;
  metadataBytes: Uint8Array;
  metadataHex: string;
  /** `System.Version` as the runtime encodes it (what `Core_version` answers). */
  versionBytes: Uint8Array;
  /** `System.Version` in the shape `state_getRuntimeVersion` answers. */
  versionJson: Record<string, unknown>;
  specVersion: number;
  transactionVersion: number;
  /** `spec_name` (`node-subtensor`), what `System.LastRuntimeUpgrade` records. */
  specName: string;
  /**
   * Whether the runtime keeps the stateful epoch counter (`SubnetEpochIndex`, spec 423 on): the
   * counter model, pool rejections by `SubtensorTransactionExtension`, the owner's exemptions and
   * pulses by `write_pulse`. False: spec 393's block-number formula and its behaviour.
   */
  counterEpochs: boolean;
  extensions: TransactionExtension[];
  storage(pallet: string, name: string): StorageEntry;
  hasStorage(pallet: string, name: string): boolean;
  constant(pallet: string, name: string): Uint8Array;
  /** The module error called `name`; `name` may be `Pallet.Error` or a bare SubtensorModule error. */
  moduleError(name: string): ModuleErrorIndex | undefined;
  /** `[pallet index, call index]` of `pallet.call` (snake_case call name, as the metadata has it). */
  callIndex(pallet: string, call: string): [number, number];
  /** Encodes `value` as the registry type `type`. */
  encode(type: string, value: unknown): Uint8Array;
  /**
   * Decodes a bool, unsigned integer or 32-byte value (newtypes unwrapped) to a plain JS value:
   * boolean, number (≤ u32), bigint (u64, u128) or bytes; undefined for any other type.
   */
  decodePrimitive(
    type: string,
    bytes: Uint8Array,
  ): boolean | number | bigint | Uint8Array | undefined;
  decode<T extends Codec = Codec>(type: string, bytes: Uint8Array): T;
  /** SCALE of one `RuntimeEvent`: pallet index, variant index, then each field. */
  encodeEvent(pallet: string, event: string, fields: unknown[]): Uint8Array;
}

// Four of finney's extensions are unknown to polkadot-js; declaring them (they carry nothing)
// keeps the registry quiet instead of warning on every load.
const EMPTY_EXTENSIONS = {
  SudoTransactionExtension: { extrinsic: {}, payload: {} },
  CheckShieldedTxValidity: { extrinsic: {}, payload: {} },
  SubtensorTransactionExtension: { extrinsic: {}, payload: {} },
  DrandPriority: { extrinsic: {}, payload: {} },
};

const cache = new Map<string, Runtime>();

/**
 * The data/ folder shipped with @platform/chain, found by walking up from this module so the
 * same lookup works from src/ (tests) and from the bundled dist/.
 */
export function findChainDataFile(name: string): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const candidate = join(dir, "data", name);
    if (existsSync(candidate)) return candidate;
    dir = dirname(dir);
  }
  throw new Error(`local subtensor: cannot find data/${name} above ${import.meta.url}`);
}

/** Loads (once per path) the metadata file and everything derived from it. */
export function loadRuntime(path = findChainDataFile(METADATA_FILE)): Runtime {
  const cached = cache.get(path);
  if (cached) return cached;
  const runtime = buildRuntime(new Uint8Array(readFileSync(path)));
  cache.set(path, runtime);
  return runtime;
}

function buildRuntime(metadataBytes: Uint8Array): Runtime {
  const registry = new TypeRegistry();
  const metadata = new Metadata(registry, metadataBytes);
  registry.setMetadata(metadata, undefined, EMPTY_EXTENSIONS, true);
  const latest = metadata.asLatest;
  const lookupName = (id: { toNumber(): number } | number) =>
    registry.createLookupType(typeof id === "number" ? id : id.toNumber());

  const pallets = new Map(latest.pallets.map((p) => [p.name.toString(), p]));
  const pallet = (name: string) => {
    const found = pallets.get(name);
    if (!found) throw new Error(`local subtensor: no pallet ${name} in the metadata`);
    return found;
  };

  const storageCache = new Map<string, StorageEntry>();
  const storage = (palletName: string, name: string): StorageEntry => {
    const key = `${palletName}.${name}`;
    const hit = storageCache.get(key);
    if (hit) return hit;
    const item = pallet(palletName)
      .storage.unwrapOr(undefined)
      ?.items.find((i) => i.name.toString() === name);
    if (!item) throw new Error(`local subtensor: no storage item ${key} in the metadata`);
    let entry: StorageEntry;
    const base = {
      pallet: palletName,
      name,
      fallback: item.fallback.toU8a(true),
      optional: item.modifier.isOptional,
    };
    if (item.type.isPlain) {
      entry = { ...base, hashers: [], keyTypes: [], valueType: lookupName(item.type.asPlain) };
    } else {
      const map = item.type.asMap;
      const hashers = map.hashers.map((h) => h.type.toString());
      const keyDef = registry.lookup.getSiType(map.key).def;
      // A map with several hashers keys on a tuple, one element per hasher.
      const keyTypes =
        hashers.length > 1 && keyDef.isTuple
          ? keyDef.asTuple.map((t) => lookupName(t))
          : [lookupName(map.key)];
      entry = { ...base, hashers, keyTypes, valueType: lookupName(map.value) };
    }
    storageCache.set(key, entry);
    return entry;
  };
  const hasStorage = (palletName: string, name: string) =>
    pallets
      .get(palletName)
      ?.storage.unwrapOr(undefined)
      ?.items.some((i) => i.name.toString() === name) ?? false;

  const constant = (palletName: string, name: string) => {
    const c = pallet(palletName).constants.find((k) => k.name.toString() === name);
    if (!c) throw new Error(`local subtensor: no constant ${palletName}.${name}`);
    return c.value.toU8a(true);
  };

  const errorIndex = new Map<string, ModuleErrorIndex>();
  for (const p of latest.pallets) {
    const errors = p.errors.unwrapOr(undefined);
    if (!errors) continue;
    const def = registry.lookup.getSiType(errors.type).def;
    if (!def.isVariant) continue;
    for (const v of def.asVariant.variants) {
      const entry = {
        pallet: p.name.toString(),
        name: v.name.toString(),
        index: p.index.toNumber(),
        variant: v.index.toNumber(),
      };
      errorIndex.set(`${entry.pallet}.${entry.name}`, entry);
    }
  }

  const extrinsic = latest.extrinsic;
  const implicitIds = implicitTypeIds(metadata);
  const extensions = extrinsic.transactionExtensions.map((ext, i) => {
    const implicit = implicitIds?.[i] ?? ext.implicit;
    const implicitDef = registry.lookup.getSiType(implicit).def;
    const implicitEmpty =
      (implicitDef.isTuple && implicitDef.asTuple.length === 0) ||
      (implicitDef.isComposite && implicitDef.asComposite.fields.length === 0);
    return {
      identifier: ext.identifier.toString(),
      explicitType: lookupName(ext.type),
      implicitType: lookupName(implicit),
      implicitEmpty,
    };
  });

  const versionBytes = constant("System", "Version");
  const version = registry.createType("RuntimeVersion", versionBytes) as unknown as RuntimeVersion;
  const versionJson = version.toJSON() as Record<string, unknown>;

  const encodeEvent = (palletName: string, event: string, fields: unknown[]) => {
    const p = pallet(palletName);
    const events = p.events.unwrapOr(undefined);
    if (!events) throw new Error(`local subtensor: ${palletName} has no events`);
    const variant = registry.lookup
      .getSiType(events.type)
      .def.asVariant.variants.find((v) => v.name.toString() === event);
    if (!variant) throw new Error(`local subtensor: no event ${palletName}.${event}`);
    if (variant.fields.length !== fields.length) {
      throw new Error(`local subtensor: ${palletName}.${event} takes ${variant.fields.length}`);
    }
    const parts = variant.fields.map((f, i) =>
      registry.createType(lookupName(f.type), fields[i]).toU8a(),
    );
    const head = new Uint8Array([p.index.toNumber(), variant.index.toNumber()]);
    return concatBytes([head, ...parts]);
  };

  const callIndex = (palletName: string, call: string): [number, number] => {
    const p = pallet(palletName);
    const calls = p.calls.unwrapOr(undefined);
    const variant =
      calls &&
      registry.lookup
        .getSiType(calls.type)
        .def.asVariant.variants.find((v) => v.name.toString() === call);
    if (!variant) throw new Error(`local subtensor: no call ${palletName}.${call}`);
    return [p.index.toNumber(), variant.index.toNumber()];
  };

  // The hot storage values (u16 counts, u64 limits, bools, account ids) skip the codec classes:
  // a 4,096-neuron registration block reads and writes them tens of thousands of times.
  const primitiveCache = new Map<string, Primitive | null>();
  const primitiveOf = (type: string): Primitive | null => {
    const cached = primitiveCache.get(type);
    if (cached !== undefined) return cached;
    const kind = primitiveKind(registry, type);
    primitiveCache.set(type, kind);
    return kind;
  };

  return {
    registry,
    metadata,
    callIndex,
    metadataBytes,
    metadataHex: u8aToHex(metadataBytes),
    versionBytes,
    versionJson,
    specVersion: version.specVersion.toNumber(),
    transactionVersion: version.transactionVersion.toNumber(),
    specName: version.specName.toString(),
    counterEpochs: hasStorage("SubtensorModule", "SubnetEpochIndex"),
    extensions,
    storage,
    hasStorage,
    constant,
    moduleError: (name) =>
      errorIndex.get(name.includes(".") ? name : `SubtensorModule.${name}`) ??
      errorIndex.get(`System.${name}`),
    encode: (type, value) => {
      const kind = primitiveOf(type);
      return (kind && encodePrimitive(kind, value)) ?? registry.createType(type, value).toU8a();
    },
    decodePrimitive: (type, bytes) => {
      const kind = primitiveOf(type);
      return kind ? decodePrimitive(kind, bytes) : undefined;
    },
    decode: <T extends Codec = Codec>(type: string, bytes: Uint8Array) =>
      registry.createType(type, bytes) as unknown as T,
    encodeEvent,
  };
}

/**
 * The implicit ("additional signed") type of each extension as a pre-V16 metadata states it.
 * @polkadot/types' conversion of V14/V15 to the latest shape loses it (every extension's
 * `implicit` comes out as type 0), so read it from the original; undefined for V16.
 */
function implicitTypeIds(metadata: Metadata): SiLookupTypeId[] | undefined {
  if (metadata.version === 14) {
    return metadata.asV14.extrinsic.signedExtensions.map((e) => e.additionalSigned);
  }
  if (metadata.version === 15) {
    return metadata.asV15.extrinsic.signedExtensions.map((e) => e.additionalSigned);
  }
  return undefined;
}

/** Concatenates byte arrays into one. */
export function concatBytes(parts: readonly Uint8Array[]): Uint8Array {
  let length = 0;
  for (const p of parts) length += p.length;
  const out = new Uint8Array(length);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

type Primitive = "bool" | "u8" | "u16" | "u32" | "u64" | "u128" | "bytes32";

const UINT_BYTES = { u8: 1, u16: 2, u32: 4, u64: 8, u128: 16 } as const;

function primitiveKind(registry: TypeRegistry, type: string): Primitive | null {
  const id = /^Lookup(\d+)$/.exec(type)?.[1];
  if (id === undefined) return null;
  let def = registry.lookup.getSiType(Number(id)).def;
  // Newtypes (NetUid, AccountId32) are one-field composites around the real type.
  for (
    let depth = 0;
    def.isComposite && def.asComposite.fields.length === 1 && depth < 4;
    depth++
  ) {
    def = registry.lookup.getSiType(def.asComposite.fields[0]!.type).def;
  }
  if (def.isPrimitive) {
    const name = def.asPrimitive.type.toLowerCase();
    return name === "bool" || name in UINT_BYTES ? (name as Primitive) : null;
  }
  if (def.isArray && def.asArray.len.toNumber() === 32) {
    const inner = registry.lookup.getSiType(def.asArray.type).def;
    if (inner.isPrimitive && inner.asPrimitive.type.toString() === "U8") return "bytes32";
  }
  return null;
}

function encodePrimitive(kind: Primitive, value: unknown): Uint8Array | undefined {
  if (kind === "bool")
    return typeof value === "boolean" ? new Uint8Array([value ? 1 : 0]) : undefined;
  if (kind === "bytes32")
    return value instanceof Uint8Array && value.length === 32 ? value : undefined;
  let n: bigint;
  if (typeof value === "number" && Number.isSafeInteger(value) && value >= 0) n = BigInt(value);
  else if (typeof value === "bigint" && value >= 0n) n = value;
  else if (typeof value === "string" && /^\d+$/.test(value)) n = BigInt(value);
  else return undefined;
  const size = UINT_BYTES[kind];
  if (n >> BigInt(size * 8) !== 0n) return undefined;
  const out = new Uint8Array(size);
  for (let i = 0; i < size; i++) {
    out[i] = Number(n & 0xffn);
    n >>= 8n;
  }
  return out;
}

function decodePrimitive(
  kind: Primitive,
  bytes: Uint8Array,
): boolean | number | bigint | Uint8Array | undefined {
  if (kind === "bool") return bytes[0] === 1;
  if (kind === "bytes32") return bytes.slice(0, 32);
  const size = UINT_BYTES[kind];
  if (bytes.length < size) return undefined;
  let n = 0n;
  for (let i = size - 1; i >= 0; i--) n = (n << 8n) | BigInt(bytes[i] as number);
  return size <= 4 ? Number(n) : n;
}
