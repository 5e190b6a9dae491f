// Writes ZIP archives byte by byte: ordinary ones (`zipFiles`, what a miner's tool uploads) and,
// through `writeZip` in /testing, the hostile ones (symlinks, lying sizes, escaping names,
// duplicates) no well-behaved archiver produces, so a challenge tests its readZip rules with it.
import { crc32, deflateRawSync } from "node:zlib";

/** One entry; every field a hostile archive could bend is settable. */
export interface ZipEntrySpec {
  name: string | Buffer;
  data?: string | Buffer;
  /** 0 stored, 8 deflated (default), anything else written as is. */
  method?: number;
  /** Unix mode in the high half of the external attributes (e.g. 0o120777 for a symlink). */
  unixMode?: number;
  /** Raw external attributes (wins over unixMode). */
  externalAttributes?: number;
  /** Bytes to store as the entry's compressed data instead of compressing `data`. */
  packed?: Buffer;
  /** Size to claim in the headers instead of the real one. */
  declaredSize?: number;
  /** General purpose flags (bit 0: encrypted; bit 11 is always set: UTF-8 names). */
  flags?: number;
}

/** A ZIP holding `entries` in order. */
export function writeZip(entries: readonly ZipEntrySpec[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const spec of entries) {
    const name = typeof spec.name === "string" ? Buffer.from(spec.name, "utf8") : spec.name;
    const data =
      typeof spec.data === "string"
        ? Buffer.from(spec.data, "utf8")
        : (spec.data ?? Buffer.alloc(0));
    const method = spec.method ?? 8;
    const packed = spec.packed ?? (method === 8 ? deflateRawSync(data) : data);
    const size = spec.declaredSize ?? data.length;
    const crc = crc32(data);
    const flags = (spec.flags ?? 0) | 0x800;
    const attributes =
      spec.externalAttributes ??
      ((spec.unixMode ?? (name.at(-1) === 0x2f ? 0o040755 : 0o100644)) * 0x10000) >>> 0;

    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(flags, 6);
    local.writeUInt16LE(method, 8);
    local.writeUInt16LE(0, 10); // time
    local.writeUInt16LE(0x21, 12); // date: 1980-01-01
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(packed.length, 18);
    local.writeUInt32LE(size, 22);
    local.writeUInt16LE(name.length, 26);
    local.writeUInt16LE(0, 28);
    locals.push(local, name, packed);

    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE((3 << 8) | 20, 4); // made by Unix
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(flags, 8);
    central.writeUInt16LE(method, 10);
    central.writeUInt16LE(0, 12);
    central.writeUInt16LE(0x21, 14);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(packed.length, 20);
    central.writeUInt32LE(size, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt16LE(0, 30);
    central.writeUInt16LE(0, 32);
    central.writeUInt16LE(0, 34);
    central.writeUInt16LE(0, 36);
    central.writeUInt32LE(attributes, 38);
    central.writeUInt32LE(offset, 42);
    centrals.push(central, name);
    offset += local.length + name.length + packed.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

/** One file of an ordinary archive: a relative path with `/` separators, and its bytes. */
export interface ZipFileInput {
  path: string;
  data: string | Uint8Array;
}

/**
 * An ordinary, reproducible ZIP of `files`: deflated, sorted by path, every timestamp
 * 1980-01-01 and mode 0644, so the same files always give the same bytes (and the same sha256).
 * What `readZip` reads back; paths are written as given (check them with your own rules).
 */
export function zipFiles(files: readonly ZipFileInput[]): Buffer {
  const sorted = [...files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return writeZip(
    sorted.map((file) => ({
      name: file.path,
      data: typeof file.data === "string" ? file.data : Buffer.from(file.data),
    })),
  );
}
