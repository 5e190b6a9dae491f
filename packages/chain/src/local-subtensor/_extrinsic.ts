import type { Call } from "@polkadot/types/interfaces";
import {
  cryptoIsReady,
  ed25519Verify,
  secp256k1Verify,
  sr25519Verify,
} from "@polkadot/util-crypto";
import { blake2_256, compact, readCompact, toHex, u32le } from "./_bytes.js";
import { concatBytes, type Runtime } from "./_runtime.js";

/** A transaction's era: immortal, or valid for `period` blocks from its birth. */
export type Era = { mortal: false } | { mortal: true; period: number; phase: number };

/** The address form of the signer (`MultiAddress`); only `Id` names an account on subtensor. */
export type Signer =
  | { kind: "Id"; accountId: Uint8Array }
  | { kind: "Index" | "Raw" | "Address32" | "Address20" };

/** A submitted extrinsic taken apart with the metadata. */
export interface DecodedExtrinsic {
  /** The whole extrinsic, its compact length prefix included (what is hashed and stored). */
  bytes: Uint8Array;
  /** blake2-256 of `bytes`, 0x-hex: the transaction hash clients track. */
  hash: string;
  version: number;
  signed: boolean;
  signer?: Signer;
  signature?: { scheme: "ed25519" | "sr25519" | "ecdsa"; bytes: Uint8Array };
  /** The explicit transaction-extension bytes, in the metadata's order. */
  extra: Uint8Array;
  era: Era;
  nonce: number;
  tip: bigint;
  /** CheckMetadataHash mode: 0 disabled, 1 enabled. */
  metadataHashMode: number;
  callBytes: Uint8Array;
  call: Call;
  /** Pallet and call names as the metadata spells them, e.g. `SubtensorModule`, `set_weights`. */
  pallet: string;
  method: string;
}

/** What the implicit (signed-but-not-sent) extension data is computed from. */
export interface SigningContext {
  specVersion: number;
  transactionVersion: number;
  genesisHash: Uint8Array;
  /** The hash of the era's birth block (the genesis hash for an immortal era). */
  birthHash: Uint8Array;
  /** The runtime's metadata hash, if it was built with one (CheckMetadataHash mode 1). */
  metadataHash?: Uint8Array;
}

/** A malformed extrinsic (the node answers 1001 "Extrinsic has invalid format"). */
export class ExtrinsicFormatError extends Error {
  override readonly name = "ExtrinsicFormatError";
}

/** Decodes an `Era` (1 byte immortal, 2 bytes mortal) at `offset`. */
export function decodeEra(bytes: Uint8Array, offset = 0): { era: Era; length: number } {
  const first = bytes[offset];
  if (first === undefined) throw new ExtrinsicFormatError("missing era");
  if (first === 0) return { era: { mortal: false }, length: 1 };
  const second = bytes[offset + 1];
  if (second === undefined) throw new ExtrinsicFormatError("truncated era");
  const encoded = first + (second << 8);
  const period = 2 << (encoded % 16);
  const quantizeFactor = Math.max(period >> 12, 1);
  const phase = (encoded >> 4) * quantizeFactor;
  if (period < 4 || phase >= period) throw new ExtrinsicFormatError("invalid era");
  return { era: { mortal: true, period, phase }, length: 2 };
}

/** The block an era was born at, seen from block `current` (sp_runtime `Era::birth`). */
export function eraBirth(era: Era, current: number): number {
  if (!era.mortal) return 0;
  return (
    Math.floor((Math.max(current, era.phase) - era.phase) / era.period) * era.period + era.phase
  );
}

/** The first block an era is no longer valid at, seen from block `current`. */
export function eraDeath(era: Era, current: number): number {
  return era.mortal ? eraBirth(era, current) + era.period : Number.POSITIVE_INFINITY;
}

function signerAt(bytes: Uint8Array, offset: number): { signer: Signer; length: number } {
  const variant = bytes[offset];
  const need = (n: number) => {
    if (offset + 1 + n > bytes.length) throw new ExtrinsicFormatError("truncated address");
  };
  switch (variant) {
    case 0:
      need(32);
      return {
        signer: { kind: "Id", accountId: bytes.slice(offset + 1, offset + 33) },
        length: 33,
      };
    case 1: {
      const { length } = readCompact(bytes, offset + 1);
      return { signer: { kind: "Index" }, length: 1 + length };
    }
    case 2: {
      const { value, length } = readCompact(bytes, offset + 1);
      need(length + Number(value));
      return { signer: { kind: "Raw" }, length: 1 + length + Number(value) };
    }
    case 3:
      need(32);
      return { signer: { kind: "Address32" }, length: 33 };
    case 4:
      need(20);
      return { signer: { kind: "Address20" }, length: 21 };
    default:
      throw new ExtrinsicFormatError("unknown address variant");
  }
}

const SIGNATURE_SCHEMES = [
  ["ed25519", 64],
  ["sr25519", 64],
  ["ecdsa", 65],
] as const;

/**
 * Takes a SCALE extrinsic (with its length prefix) apart: version, signer, signature, the
 * explicit extension data of each extension the metadata lists (in order), and the call.
 * Throws `ExtrinsicFormatError` on anything that does not decode exactly.
 */
export function decodeExtrinsic(runtime: Runtime, bytes: Uint8Array): DecodedExtrinsic {
  let prefix: { value: bigint; length: number };
  try {
    prefix = readCompact(bytes, 0);
  } catch {
    throw new ExtrinsicFormatError("missing length prefix");
  }
  if (Number(prefix.value) !== bytes.length - prefix.length) {
    throw new ExtrinsicFormatError("length prefix does not match the extrinsic");
  }
  let at = prefix.length;
  const head = bytes[at];
  if (head === undefined) throw new ExtrinsicFormatError("empty extrinsic");
  at += 1;
  const version = head & 0x3f;
  const signed = (head & 0x80) !== 0;
  if ((version !== 4 && version !== 5) || (head & 0x40) !== 0 || (signed && version !== 4)) {
    // 0x45 (v5 "general") transactions are not submitted by polkadot-js; refusing them keeps the
    // verifier to the one signed format it implements.
    throw new ExtrinsicFormatError(`unsupported extrinsic version byte 0x${head.toString(16)}`);
  }
  let signer: Signer | undefined;
  let signature: DecodedExtrinsic["signature"];
  let era: Era = { mortal: false };
  let nonce = 0;
  let tip = 0n;
  let metadataHashMode = 0;
  let extraStart = at;
  if (signed) {
    const address = signerAt(bytes, at);
    signer = address.signer;
    at += address.length;
    const scheme = SIGNATURE_SCHEMES[bytes[at] ?? 255];
    if (!scheme) throw new ExtrinsicFormatError("unknown signature variant");
    if (at + 1 + scheme[1] > bytes.length) throw new ExtrinsicFormatError("truncated signature");
    signature = { scheme: scheme[0], bytes: bytes.slice(at + 1, at + 1 + scheme[1]) };
    at += 1 + scheme[1];
    extraStart = at;
    for (const ext of runtime.extensions) {
      at += readExtension(runtime, ext.identifier, ext.explicitType, bytes, at, (value) => {
        if ("era" in value) era = value.era;
        if ("nonce" in value) nonce = value.nonce;
        if ("tip" in value) tip = value.tip;
        if ("mode" in value) metadataHashMode = value.mode;
      });
    }
  }
  const extra = bytes.slice(extraStart, at);
  const callBytes = bytes.slice(at);
  let call: Call;
  try {
    call = runtime.registry.createType("Call", callBytes);
  } catch (error) {
    throw new ExtrinsicFormatError(`call does not decode: ${(error as Error).message}`);
  }
  if (call.encodedLength !== callBytes.length) {
    throw new ExtrinsicFormatError("trailing bytes after the call");
  }
  const meta = runtime.registry.findMetaCall(call.callIndex);
  const palletIndex = call.callIndex[0] as number;
  const pallet =
    runtime.metadata.asLatest.pallets
      .find((p) => p.index.toNumber() === palletIndex)
      ?.name.toString() ?? meta.section;
  const result: DecodedExtrinsic = {
    bytes,
    hash: toHex(blake2_256(bytes)),
    version,
    signed,
    extra,
    era,
    nonce,
    tip,
    metadataHashMode,
    callBytes,
    call,
    pallet,
    method: meta.meta.name.toString(),
  };
  if (signer) result.signer = signer;
  if (signature) result.signature = signature;
  return result;
}

type ExtensionValue =
  | { era: Era }
  | { nonce: number }
  | { tip: bigint }
  | { mode: number }
  | object;

// Reads one extension's explicit data at `at`; returns the bytes it took.
function readExtension(
  runtime: Runtime,
  identifier: string,
  explicitType: string,
  bytes: Uint8Array,
  at: number,
  take: (value: ExtensionValue) => void,
): number {
  try {
    switch (identifier) {
      case "CheckMortality": {
        const { era, length } = decodeEra(bytes, at);
        take({ era });
        return length;
      }
      case "CheckNonce": {
        const { value, length } = readCompact(bytes, at);
        if (value > 0xffffffffn) throw new ExtrinsicFormatError("nonce above u32");
        take({ nonce: Number(value) });
        return length;
      }
      case "ChargeTransactionPayment": {
        const { value, length } = readCompact(bytes, at);
        take({ tip: value });
        return length;
      }
      case "CheckMetadataHash": {
        const mode = bytes[at];
        if (mode === undefined || mode > 1) throw new ExtrinsicFormatError("bad metadata mode");
        take({ mode });
        return 1;
      }
      default: {
        // Any other extension: its explicit part is whatever its metadata type decodes.
        const value = runtime.registry.createType(explicitType, bytes.subarray(at));
        return value.encodedLength;
      }
    }
  } catch (error) {
    if (error instanceof ExtrinsicFormatError) throw error;
    throw new ExtrinsicFormatError(`${identifier}: ${(error as Error).message}`);
  }
}

/**
 * The bytes a signer signs (`SignedPayload`): call ‖ each extension's explicit data ‖ each
 * extension's implicit data, in the metadata's order. The signature covers their blake2-256
 * instead when they are longer than 256 bytes (see `signedMessage`).
 */
export function signingPayload(
  runtime: Runtime,
  ex: DecodedExtrinsic,
  context: SigningContext,
): Uint8Array {
  const implicit = runtime.extensions.map((ext) => {
    switch (ext.identifier) {
      case "CheckSpecVersion":
        return u32le(context.specVersion);
      case "CheckTxVersion":
        return u32le(context.transactionVersion);
      case "CheckGenesis":
        return context.genesisHash;
      case "CheckMortality":
        return ex.era.mortal ? context.birthHash : context.genesisHash;
      case "CheckMetadataHash":
        // Option<[u8; 32]>: None unless the runtime was built with a metadata hash.
        return ex.metadataHashMode === 1 && context.metadataHash
          ? concatBytes([new Uint8Array([1]), context.metadataHash])
          : new Uint8Array([0]);
      default:
        if (!ext.implicitEmpty) {
          throw new Error(`no implicit data known for extension ${ext.identifier}`);
        }
        return new Uint8Array(0);
    }
  });
  return concatBytes([ex.callBytes, ex.extra, ...implicit]);
}

/** What the signature is over: the payload, or its blake2-256 when longer than 256 bytes. */
export function signedMessage(payload: Uint8Array): Uint8Array {
  return payload.length > 256 ? blake2_256(payload) : payload;
}

/**
 * True when the extrinsic's signature is its signer's over `payload` (sr25519, ed25519, or
 * ecdsa against blake2-256 of the recovered key, as `MultiSignature::verify` checks).
 * Requires the crypto wasm to be ready (`cryptoWaitReady`).
 */
export function verifyExtrinsicSignature(ex: DecodedExtrinsic, payload: Uint8Array): boolean {
  // Without the wasm the verifiers throw, which would read as a bad signature below.
  if (!cryptoIsReady())
    throw new Error("sr25519 is not initialised: await cryptoWaitReady() first");
  if (!ex.signature || ex.signer?.kind !== "Id") return false;
  const message = signedMessage(payload);
  const account = ex.signer.accountId;
  try {
    switch (ex.signature.scheme) {
      case "sr25519":
        return sr25519Verify(message, ex.signature.bytes, account);
      case "ed25519":
        return ed25519Verify(message, ex.signature.bytes, account);
      case "ecdsa":
        return secp256k1Verify(message, ex.signature.bytes, account, "blake2");
    }
  } catch {
    return false; // a key that is not a curve point
  }
}

/** A bare (unsigned) v4 extrinsic around `callBytes`, with its length prefix. */
export function bareExtrinsic(callBytes: Uint8Array): Uint8Array {
  const body = concatBytes([new Uint8Array([0x04]), callBytes]);
  return concatBytes([compact(body.length), body]);
}
