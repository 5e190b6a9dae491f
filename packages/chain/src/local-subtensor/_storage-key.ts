import { blake2AsU8a, xxhashAsU8a } from "@polkadot/util-crypto";
import { concatBytes, type Runtime, type StorageEntry } from "./_runtime.js";

// FRAME's storage hashers by the names the metadata gives them.
function hashPart(hasher: string, data: Uint8Array): Uint8Array {
  switch (hasher) {
    case "Identity":
      return data;
    case "Twox64Concat":
      return concatBytes([xxhashAsU8a(data, 64), data]);
    case "Blake2_128Concat":
      return concatBytes([blake2AsU8a(data, 128), data]);
    case "Twox128":
      return xxhashAsU8a(data, 128);
    case "Twox256":
      return xxhashAsU8a(data, 256);
    case "Blake2_128":
      return blake2AsU8a(data, 128);
    case "Blake2_256":
      return blake2AsU8a(data, 256);
    default:
      throw new Error(`unknown storage hasher ${hasher}`);
  }
}

const prefixCache = new WeakMap<StorageEntry, Uint8Array>();

/** twox128(pallet) ++ twox128(item): the prefix every key of the item starts with. */
export function storagePrefix(entry: StorageEntry): Uint8Array {
  let prefix = prefixCache.get(entry);
  if (!prefix) {
    prefix = concatBytes([xxhashAsU8a(entry.pallet, 128), xxhashAsU8a(entry.name, 128)]);
    prefixCache.set(entry, prefix);
  }
  return prefix;
}

/**
 * The full storage key of `entry` for the given key parts, each hashed with the metadata's
 * hasher. A part is either its SCALE bytes or a value the registry encodes as the key type.
 */
export function storageKey(
  runtime: Runtime,
  entry: StorageEntry,
  parts: unknown[] = [],
): Uint8Array {
  if (parts.length !== entry.hashers.length) {
    throw new Error(`${entry.pallet}.${entry.name} takes ${entry.hashers.length} key parts`);
  }
  const hashed = parts.map((part, i) => {
    const bytes =
      part instanceof Uint8Array ? part : runtime.encode(entry.keyTypes[i] as string, part);
    return hashPart(entry.hashers[i] as string, bytes);
  });
  return concatBytes([storagePrefix(entry), ...hashed]);
}
