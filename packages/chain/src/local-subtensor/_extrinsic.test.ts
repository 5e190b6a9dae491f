import { readFileSync } from "node:fs";
import { hexToU8a, u8aToHex } from "@polkadot/util";
import { cryptoWaitReady, decodeAddress } from "@polkadot/util-crypto";
import { beforeAll, describe, expect, it } from "vitest";
import {
  decodeEra,
  decodeExtrinsic,
  eraBirth,
  eraDeath,
  signingPayload,
  verifyExtrinsicSignature,
} from "./_extrinsic.js";
import { findChainDataFile, loadRuntime, RUNTIME_FILES, type RuntimeName } from "./_runtime.js";
import { SPEC475_METADATA_PATH } from "./_test-spec475.js";

interface Fixture {
  name: string;
  payload: {
    genesisHash: string;
    specVersion: string;
    transactionVersion: string;
    address: string;
    blockHash: string;
    blockNumber: string;
    era: string;
    method: string;
    nonce: string;
    tip: string;
  };
  signerPublicKey: string;
  signature: string;
  signedExtrinsicHex: string;
  extrinsicHashBlake2: string;
}

const vectors = JSON.parse(readFileSync(findChainDataFile("vectors.json"), "utf8")) as {
  finney_onchain_extrinsics_spec467: { fixtures: Fixture[] };
};
const fixtures = vectors.finney_onchain_extrinsics_spec467.fixtures;

// The two runtimes the local subtensor serves, and finney's spec-475 metadata as a check that the
// decoding still holds on a newer runtime than the one the extrinsics were signed under.
const METADATA_UNDER_TEST: [string, string][] = [
  ...(Object.keys(RUNTIME_FILES) as RuntimeName[]).map((name): [string, string] => [
    name,
    findChainDataFile(RUNTIME_FILES[name]),
  ]),
  ["spec475 (test vector, V14)", SPEC475_METADATA_PATH],
];

describe.each(METADATA_UNDER_TEST)(
  "real finney extrinsics (spec 467) against the %s metadata",
  (_name, path) => {
    const runtime = loadRuntime(path);
    beforeAll(async () => {
      await cryptoWaitReady();
    });

    it("has both fixtures", () => {
      expect(fixtures.map((f) => f.name)).toEqual([
        "balances.transferKeepAlive",
        "subtensorModule.commitTimelockedMechanismWeights",
      ]);
    });

    for (const f of fixtures) {
      describe(f.name, () => {
        const bytes = hexToU8a(f.signedExtrinsicHex);
        const context = () => ({
          specVersion: Number(f.payload.specVersion),
          transactionVersion: Number(f.payload.transactionVersion),
          genesisHash: hexToU8a(f.payload.genesisHash),
          birthHash: hexToU8a(f.payload.blockHash),
        });

        it("decodes with the metadata's own codec and re-encodes byte for byte", () => {
          const ex = runtime.registry.createType("Extrinsic", bytes);
          expect(u8aToHex(ex.toU8a())).toBe(f.signedExtrinsicHex);
          expect(ex.isSigned).toBe(true);
          const call = runtime.registry.createType("Call", hexToU8a(f.payload.method));
          expect(u8aToHex(call.toU8a())).toBe(f.payload.method);
          expect(u8aToHex(ex.method.toU8a())).toBe(f.payload.method);
          const { section, method } = runtime.registry.findMetaCall(call.callIndex);
          expect(`${section}.${method}`).toBe(f.name);
          expect(u8aToHex(ex.hash)).toBe(f.extrinsicHashBlake2);
        });

        it("decodes signer, extensions and call, and hashes to the recorded hash", () => {
          const ex = decodeExtrinsic(runtime, bytes);
          expect(ex.signed).toBe(true);
          expect(ex.version).toBe(4);
          expect(ex.signer?.kind).toBe("Id");
          const signer = ex.signer as { accountId: Uint8Array };
          expect(u8aToHex(signer.accountId)).toBe(f.signerPublicKey);
          expect(u8aToHex(decodeAddress(f.payload.address))).toBe(f.signerPublicKey);
          expect(ex.signature?.scheme).toBe("sr25519");
          expect(u8aToHex(ex.signature?.bytes)).toBe(f.signature);
          expect(ex.nonce).toBe(Number(f.payload.nonce));
          expect(ex.tip).toBe(BigInt(f.payload.tip));
          expect(ex.metadataHashMode).toBe(0);
          expect(u8aToHex(ex.callBytes)).toBe(f.payload.method);
          expect(ex.hash).toBe(f.extrinsicHashBlake2);
          // The era's birth, seen from the signing block, is that block.
          const { era } = decodeEra(hexToU8a(f.payload.era));
          expect(ex.era).toEqual(era);
          const signedAt = Number(f.payload.blockNumber);
          expect(eraBirth(ex.era, signedAt)).toBe(signedAt);
          expect(eraDeath(ex.era, signedAt)).toBeGreaterThan(signedAt);
        });

        it("rebuilds the signing payload byte for byte and the sr25519 signature verifies", () => {
          const ex = decodeExtrinsic(runtime, bytes);
          const payload = signingPayload(runtime, ex, context());
          // Independent rebuild of the same payload by polkadot-js from the recorded fields.
          const reference = runtime.registry
            .createType("ExtrinsicPayload", { ...f.payload, mode: 0, version: 4 }, { version: 4 })
            .toU8a({ method: true });
          expect(u8aToHex(payload)).toBe(u8aToHex(reference));
          expect(verifyExtrinsicSignature(ex, payload)).toBe(true);
        });

        it("fails verification for a wrong genesis, spec, birth block or a flipped signature bit", () => {
          const ex = decodeExtrinsic(runtime, bytes);
          const wrong = [
            { ...context(), genesisHash: new Uint8Array(32) },
            { ...context(), specVersion: 393 },
            { ...context(), birthHash: new Uint8Array(32).fill(1) },
          ];
          for (const c of wrong) {
            expect(verifyExtrinsicSignature(ex, signingPayload(runtime, ex, c))).toBe(false);
          }
          const flipped = bytes.slice();
          // The signature starts after length prefix, version byte and the 33-byte address + variant.
          const sigAt = bytes.length - ex.callBytes.length - ex.extra.length - 64;
          flipped[sigAt] = (flipped[sigAt] as number) ^ 1;
          const tampered = decodeExtrinsic(runtime, flipped);
          expect(
            verifyExtrinsicSignature(tampered, signingPayload(runtime, tampered, context())),
          ).toBe(false);
        });
      });
    }

    it("uses the blake2-256 of payloads longer than 256 bytes (the 303-byte commit)", () => {
      const f = fixtures[1] as Fixture;
      const ex = decodeExtrinsic(runtime, hexToU8a(f.signedExtrinsicHex));
      expect(ex.pallet).toBe("SubtensorModule");
      expect(ex.method).toBe("commit_timelocked_mechanism_weights");
      const payload = signingPayload(runtime, ex, {
        specVersion: Number(f.payload.specVersion),
        transactionVersion: Number(f.payload.transactionVersion),
        genesisHash: hexToU8a(f.payload.genesisHash),
        birthHash: hexToU8a(f.payload.blockHash),
      });
      expect(payload.length).toBeGreaterThan(256);
    });

    it("refuses malformed extrinsics", () => {
      const good = hexToU8a((fixtures[0] as Fixture).signedExtrinsicHex);
      expect(() => decodeExtrinsic(runtime, good.slice(0, good.length - 1))).toThrow(/length/);
      expect(() =>
        decodeExtrinsic(runtime, new Uint8Array([0x04, 0x84, 0x09, 0x00, 0x00])),
      ).toThrow();
    });
  },
);
