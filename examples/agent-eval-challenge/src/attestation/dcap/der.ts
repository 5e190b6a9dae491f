// A minimal DER reader: just what Intel's collateral needs (CRLs, the PCK certificate's SGX
// extension). node:crypto parses certificates but exposes neither CRLs nor custom extensions,
// and a full ASN.1 library would be a dependency for a few dozen lines. Strict: definite
// lengths only, minimal length encodings, nothing may run past its parent.

export class DerError extends Error {
  override readonly name = "DerError";
}

export interface DerNode {
  /** The identifier octet (class, constructed bit and tag number < 31). */
  readonly tag: number;
  /** The content octets. */
  readonly value: Buffer;
  /** Tag, length and content: the exact encoding (what a signature covers). */
  readonly raw: Buffer;
}

export const DER_TAG = {
  integer: 0x02,
  bitString: 0x03,
  octetString: 0x04,
  oid: 0x06,
  utcTime: 0x17,
  generalizedTime: 0x18,
  sequence: 0x30,
  set: 0x31,
} as const;

/** The one node at the start of `bytes`, and where the next begins. */
export function readNode(bytes: Buffer, offset = 0): { node: DerNode; next: number } {
  if (offset + 2 > bytes.length) throw new DerError("DER truncated in a tag or length");
  const tag = bytes[offset]!;
  if ((tag & 0x1f) === 0x1f) throw new DerError("DER multi-byte tags are not supported");
  let length = bytes[offset + 1]!;
  let header = 2;
  if (length & 0x80) {
    const octets = length & 0x7f;
    if (octets === 0 || octets > 4) throw new DerError("DER indefinite or oversized length");
    if (offset + 2 + octets > bytes.length) throw new DerError("DER truncated in a length");
    length = 0;
    for (let i = 0; i < octets; i++) length = length * 256 + bytes[offset + 2 + i]!;
    if (length < 0x80 || bytes[offset + 2] === 0) throw new DerError("DER non-minimal length");
    header += octets;
  }
  const end = offset + header + length;
  if (end > bytes.length) throw new DerError("DER value runs past its container");
  return {
    node: {
      tag,
      value: bytes.subarray(offset + header, end),
      raw: bytes.subarray(offset, end),
    },
    next: end,
  };
}

/** Parses exactly one node that spans all of `bytes`. */
export function parseDer(bytes: Buffer): DerNode {
  const { node, next } = readNode(bytes);
  if (next !== bytes.length) throw new DerError("DER trailing bytes");
  return node;
}

/** The children of a constructed node, in order. */
export function children(node: DerNode): DerNode[] {
  if ((node.tag & 0x20) === 0) throw new DerError("DER children of a primitive node");
  const out: DerNode[] = [];
  let offset = 0;
  while (offset < node.value.length) {
    const { node: child, next } = readNode(node.value, offset);
    out.push(child);
    offset = next;
  }
  return out;
}

export function expectTag(node: DerNode | undefined, tag: number, what: string): DerNode {
  if (!node || node.tag !== tag) throw new DerError(`DER ${what}: unexpected tag`);
  return node;
}

/** An OBJECT IDENTIFIER in dotted form. */
export function oidString(node: DerNode): string {
  const bytes = expectTag(node, DER_TAG.oid, "object identifier").value;
  if (bytes.length === 0) throw new DerError("DER empty object identifier");
  const arcs: number[] = [];
  let arc = 0;
  for (const byte of bytes) {
    arc = arc * 128 + (byte & 0x7f);
    if (arc > Number.MAX_SAFE_INTEGER / 128) throw new DerError("DER oversized OID arc");
    if ((byte & 0x80) === 0) {
      arcs.push(arc);
      arc = 0;
    }
  }
  if ((bytes[bytes.length - 1]! & 0x80) !== 0) throw new DerError("DER truncated OID arc");
  const first = arcs.shift()!;
  const head = first < 40 ? [0, first] : first < 80 ? [1, first - 40] : [2, first - 80];
  return [...head, ...arcs].join(".");
}

/** A non-negative INTEGER as a JavaScript number (SVNs, versions). */
export function smallInteger(node: DerNode): number {
  const bytes = expectTag(node, DER_TAG.integer, "integer").value;
  if (bytes.length === 0 || bytes.length > 6 || (bytes[0]! & 0x80) !== 0) {
    throw new DerError("DER integer is negative or too large");
  }
  return bytes.readUIntBE(0, bytes.length);
}

/** An INTEGER's magnitude as uppercase hex without leading zeros (certificate serials). */
export function integerHex(node: DerNode): string {
  const bytes = expectTag(node, DER_TAG.integer, "integer").value;
  return normalizeSerial(bytes.toString("hex"));
}

export const normalizeSerial = (hex: string) => hex.toUpperCase().replace(/^0+(?=.)/, "");

/** UTCTime or GeneralizedTime (the two X.509 time forms, always Zulu in DER). */
export function derTime(node: DerNode): Date {
  const text = node.value.toString("latin1");
  let match: RegExpExecArray | null;
  let year: number;
  if (node.tag === DER_TAG.utcTime) {
    match = /^(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})Z$/.exec(text);
    if (!match) throw new DerError("DER malformed UTCTime");
    const yy = Number(match[1]);
    year = yy >= 50 ? 1900 + yy : 2000 + yy; // RFC 5280 4.1.2.5.1
  } else if (node.tag === DER_TAG.generalizedTime) {
    match = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})Z$/.exec(text);
    if (!match) throw new DerError("DER malformed GeneralizedTime");
    year = Number(match[1]);
  } else {
    throw new DerError("DER time: unexpected tag");
  }
  const [, , mo, d, h, mi, s] = match.map(Number) as number[];
  return new Date(Date.UTC(year, mo! - 1, d, h, mi, s));
}
