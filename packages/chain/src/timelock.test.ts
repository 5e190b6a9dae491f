import { readFileSync } from "node:fs";
import { bls12_381 } from "@noble/curves/bls12-381.js";
import { blake2b } from "@noble/hashes/blake2.js";
import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex, hexToBytes } from "@noble/hashes/utils.js";
import { describe, expect, it } from "vitest";
import { beaconKeypair, signRound } from "./drand-beacon.js";
import {
  decodeTimelockCiphertext,
  encodeTimelockCiphertext,
  GT_SERIALIZED_LENGTH,
  serializeGt,
  TimelockError,
  type TimelockErrorCode,
  timelockCiphertextLength,
  timelockDecrypt,
  timelockEncrypt,
} from "./timelock.js";
import { decodeWeightsTlockPayload, encodeWeightsTlockPayload } from "./weights-tlock-payload.js";

// What these tests prove, and what stays unproven, is spelled out at the top of timelock.ts:
// no plaintext/ciphertext pair made by the Rust crate is public, so interoperability rests on
// drand's real signatures (identity, pairing), arkworks GT vectors (V's hash input) and the
// real finney commit (outer layout).

interface Vectors {
  drand_quicknet: { public_key_g2: string; rounds: { round: number; signature_g1: string }[] };
  finney_onchain_extrinsics_spec467: {
    fixtures: {
      name: string;
      payload: { method: string };
      decoded: { reveal_round?: number; commit_len?: number; commit_blake2_256?: string };
    }[];
  };
}

const vectors = JSON.parse(
  readFileSync(new URL("../data/vectors.json", import.meta.url), "utf8"),
) as Vectors;
const quicknetKey = hexToBytes(vectors.drand_quicknet.public_key_g2);
const signatureFor = (round: number) =>
  hexToBytes(vectors.drand_quicknet.rounds.find((entry) => entry.round === round)!.signature_g1);

const commitFixture = vectors.finney_onchain_extrinsics_spec467.fixtures.find(
  (fixture) => fixture.name === "subtensorModule.commitTimelockedMechanismWeights",
)!;
// Call bytes: pallet 7, call 118, netuid u16, mecid u8, compact length, the commit, then
// reveal_round u64 and commit_reveal_version u16.
const callBytes = hexToBytes(commitFixture.payload.method.slice(2));
const finneyCommit = callBytes.slice(7, 7 + 303);

// Arkworks serializations of e(G1, G2) and e(G1, G2)^7 (ark_bls12_381::Fq12), from aptos-core's
// algebra natives and Move tests (`BLS12381_GT_GENERATOR`, deserialized there with
// `Fq12::deserialize_uncompressed`, and `BLS12_381_GT_GENERATOR_MUL_BY_7_SERIALIZED`).
const ARKWORKS_GT_GENERATOR =
  "b68917caaa0543a808c53908f694d1b6e7b38de90ce9d83d505ca1ef1b442d2727d7d06831d8b2a7920afc71d8eb50120f17a0ea982a88591d9f43503e94a8f1abaf2e4589f65aafb7923c484540a868883432a5c60e75860b11e5465b1c9a08873ec29e844c1c888cb396933057ffdd541b03a5220eda16b2b3a6728ea678034ce39c6839f20397202d7c5c44bb68134f93193cec215031b17399577a1de5ff1f5b0666bdd8907c61a7651e4e79e0372951505a07fa73c25788db6eb8023519a5aa97b51f1cad1d43d8aabbff4dc319c79a58cafc035218747c2f75daf8f2fb7c00c44da85b129113173d4722f5b201b6b4454062e9ea8ba78c5ca3cadaf7238b47bace5ce561804ae16b8f4b63da4645b8457a93793cbd64a7254f150781019de87ee42682940f3e70a88683d512bb2c3fb7b2434da5dedbb2d0b3fb8487c84da0d5c315bdd69c46fb05d23763f2191aabd5d5c2e12a10b8f002ff681bfd1b2ee0bf619d80d2a795eb22f2aa7b85d5ffb671a70c94809f0dafc5b73ea2fb0657bae23373b4931bc9fa321e8848ef78894e987bff150d7d671aee30b3931ac8c50e0b3b0868effc38bf48cd24b4b811a2995ac2a09122bed9fd9fa0c510a87b10290836ad06c8203397b56a78e9a0c61c77e56ccb4f1bc3d3fcaea7550f3503efe30f2d24f00891cb45620605fcfaa4292687b3a7db7c1c0554a93579e889a121fd8f72649b2402996a084d2381c5043166673b3849e4fd1e7ee4af24aa8ed443f56dfd6b68ffde4435a92cd7a4ac3bc77e1ad0cb728606cf08bf6386e5410f";
const ARKWORKS_GT_GENERATOR_TIMES_7 =
  "2041ea7b66c19680e2c0bb23245a71918753220b31f88a925aa9b1e192e7c188a0b365cb994b3ec5e809206117c6411242b940b10caa37ce734496b3b7c63578a0e3c076f9b31a7ca13a716262e0e4cda4ac994efb9e19893cbfe4d464b9210d099d808a08b3c4c3846e7529984899478639c4e6c46152ef49a04af9c8e6ff442d286c4613a3dac6a4bee4b40e1f6b030f2871dabe4223b250c3181ecd3bc6819004745aeb6bac567407f2b9c7d1978c45ee6712ae46930bc00638383f6696158bad488cbe7663d681c96c035481dbcf78e7a7fbaec3799163aa6914cef3365156bdc3e533a7c883d5974e3462ac6f19e3f9ce26800ae248a45c5f0dd3a48a185969224e6cd6af9a048241bdcac9800d94aeee970e08488fb961e36a769b6c185d185b4605dc9808517196bba9d00a3e37bca466c19187486db104ee03962d39fe473e276355618e44c965f05082bb027a7baa4bcc6d8c0775c1e8a481e77df36ddad91e75a982302937f543a11fe71922dcd4f46fe8f951f91cde412b359507f2b3b6df0374bfe55c9a126ad31ce254e67d64194d32d7955ec791c9555ea5a917fc47aba319e909de82da946eb36e12aff936708402228295db2712f2fc807c95092a86afd71220699df13e2d2fdf2857976cb1e605f72f1b2edabadba3ff05501221fe81333c13917c85d725ce92791e115eb0289a5d0b3330901bb8b0ed146abeb81381b7331f1c508fb14e057b05d8b0190a9e74a3d046dcd24e7ab747049945b3d8a120c4f6d88e67661b55573aa9b361367488a1ef7dffd967d64a1518";

// Deterministic randomness so a failing case can be replayed byte for byte.
function seededRandom(seed: string): (length: number) => Uint8Array {
  let counter = 0;
  return (length) => {
    const out = new Uint8Array(length);
    for (let offset = 0; offset < length; offset += 32) {
      const block = sha256(new TextEncoder().encode(`${seed}/${counter++}`));
      out.set(block.subarray(0, Math.min(32, length - offset)), offset);
    }
    return out;
  };
}

const fourUidPayload = encodeWeightsTlockPayload({
  hotkey: hexToBytes("50aa5d2960d8135bcdaf080a6a8a5a592600859029b492040b74dd3c5ecbd676"),
  uids: [0, 5, 17, 250],
  values: [65_535, 1000, 0, 42],
  versionKey: 843_000n,
});

function expectTimelockError(run: () => unknown, codes: readonly TimelockErrorCode[]): void {
  let caught: unknown;
  try {
    run();
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(TimelockError);
  expect(codes).toContain((caught as TimelockError).code);
}

describe("serializeGt", () => {
  it("matches arkworks' Fq12 serialization of e(G1, G2) and e(G1, G2)^7", () => {
    const { G1, G2 } = bls12_381;
    const gt = serializeGt(bls12_381.pairing(G1.Point.BASE, G2.Point.BASE));
    expect(gt).toHaveLength(GT_SERIALIZED_LENGTH);
    expect(bytesToHex(gt)).toBe(ARKWORKS_GT_GENERATOR);
    const gt7 = serializeGt(bls12_381.pairing(G1.Point.BASE, G2.Point.BASE.multiply(7n)));
    expect(bytesToHex(gt7)).toBe(ARKWORKS_GT_GENERATOR_TIMES_7);
  });

  it("hashes the same power of the pairing as arkworks: the cube of the textbook reduced pairing", () => {
    // ark-ec 0.4's BLS12 final exponentiation (eprint 2020/875) raises the Miller loop output to
    // 3(p^12 - 1)/r, not (p^12 - 1)/r; V is only decryptable on chain if noble does the same.
    const { Fp, Fp12, Fr } = bls12_381.fields;
    const miller = bls12_381.pairing(
      bls12_381.G1.Point.BASE.multiply(12_345n),
      bls12_381.G2.Point.BASE.multiply(678n),
      false,
    );
    const textbook = Fp12.pow(miller, (Fp.ORDER ** 12n - 1n) / Fr.ORDER);
    expect(Fp12.eql(Fp12.finalExponentiate(miller), Fp12.pow(textbook, 3n))).toBe(true);
    expect(Fp12.eql(Fp12.finalExponentiate(miller), textbook)).toBe(false);
  });
});

describe("the real finney commit (spec 467, 303 bytes)", () => {
  it("is the commit the fixture describes", () => {
    // compact(303) = 303 << 2 | 1 = 0x04bd, little-endian.
    expect(bytesToHex(callBytes.slice(5, 7))).toBe("bd04");
    expect(finneyCommit).toHaveLength(commitFixture.decoded.commit_len!);
    expect("0x" + bytesToHex(blake2b(finneyCommit, { dkLen: 32 }))).toBe(
      commitFixture.decoded.commit_blake2_256,
    );
    const tail = new DataView(callBytes.buffer, 7 + 303);
    expect(tail.getBigUint64(0, true)).toBe(BigInt(commitFixture.decoded.reveal_round!));
    expect(tail.getUint16(8, true)).toBe(4);
  });

  it("parses into the TLECiphertext layout with a valid G2 point u and re-encodes identically", () => {
    const parts = decodeTimelockCiphertext(finneyCommit);
    expect(parts.v).toHaveLength(32);
    expect(parts.w).toHaveLength(32);
    expect(parts.nonce).toHaveLength(12);
    expect(parts.ciphertext).toHaveLength(59 + 16);
    expect(parts.cipherSuite).toBe("AES_GCM_");
    const u = bls12_381.G2.Point.fromBytes(parts.u);
    expect(u.is0()).toBe(false);
    expect(u.isTorsionFree()).toBe(true);
    expect(encodeTimelockCiphertext(parts)).toEqual(finneyCommit);
    expect(timelockCiphertextLength(59)).toBe(303);
  });

  it("does not open with a signature for another round", () => {
    expectTimelockError(
      () => timelockDecrypt(finneyCommit, signatureFor(1000)),
      ["decryption-failed"],
    );
  });
});

describe("timelockEncrypt / timelockDecrypt against drand quicknet", () => {
  const ciphertext = timelockEncrypt(fourUidPayload, 1000n, quicknetKey, {
    random: seededRandom("quicknet-1000"),
  });

  it("opens with drand's real round-1000 signature", () => {
    const plaintext = timelockDecrypt(ciphertext, signatureFor(1000));
    expect(plaintext).toEqual(fourUidPayload);
    expect(decodeWeightsTlockPayload(plaintext).uids).toEqual([0, 5, 17, 250]);
  });

  it("fails with the round-2000 signature", () => {
    expectTimelockError(
      () => timelockDecrypt(ciphertext, signatureFor(2000)),
      ["decryption-failed"],
    );
  });

  it("turns a 59-byte payload into 303 bytes laid out exactly like the real commit", () => {
    expect(fourUidPayload).toHaveLength(59);
    expect(ciphertext).toHaveLength(303);
    // Every non-random byte: the length prefixes of v, w, body, ciphertext, nonce and suite,
    // and the suite itself.
    for (const [start, end] of [
      [96, 104],
      [136, 144],
      [176, 192],
      [267, 275],
      [287, 303],
    ] as const)
      expect(bytesToHex(ciphertext.slice(start, end))).toBe(
        bytesToHex(finneyCommit.slice(start, end)),
      );
  });

  it("is deterministic given the randomness, and random by default", () => {
    const again = timelockEncrypt(fourUidPayload, 1000, quicknetKey, {
      random: seededRandom("quicknet-1000"),
    });
    expect(again).toEqual(ciphertext);
    const fresh = timelockEncrypt(fourUidPayload, 1000, quicknetKey);
    expect(fresh).not.toEqual(ciphertext);
    expect(timelockDecrypt(fresh, signatureFor(1000))).toEqual(fourUidPayload);
  });

  it("handles an empty plaintext", () => {
    const empty = timelockEncrypt(new Uint8Array(0), 2000, quicknetKey);
    expect(empty).toHaveLength(timelockCiphertextLength(0));
    expect(timelockDecrypt(empty, signatureFor(2000))).toEqual(new Uint8Array(0));
  });

  it("refuses a bit flip in any byte", { timeout: 120_000 }, () => {
    for (let index = 0; index < ciphertext.length; index++) {
      const flipped = ciphertext.slice();
      flipped[index]! ^= 1 << (index % 8);
      expectTimelockError(
        () => timelockDecrypt(flipped, signatureFor(1000)),
        ["malformed-ciphertext", "decryption-failed"],
      );
    }
  });

  it("refuses every truncation and a trailing byte as malformed", () => {
    for (let length = 0; length < ciphertext.length; length++)
      expectTimelockError(
        () => timelockDecrypt(ciphertext.slice(0, length), signatureFor(1000)),
        ["malformed-ciphertext"],
      );
    expectTimelockError(
      () => timelockDecrypt(new Uint8Array([...ciphertext, 0]), signatureFor(1000)),
      ["malformed-ciphertext"],
    );
  });

  it("refuses a wrong-length v, w or nonce and another cipher suite, even with lengths consistent", () => {
    const parts = decodeTimelockCiphertext(ciphertext);
    const variants = [
      { ...parts, v: parts.v.slice(0, 31) },
      { ...parts, w: new Uint8Array([...parts.w, 0]) },
      { ...parts, nonce: parts.nonce.slice(0, 11) },
      { ...parts, ciphertext: parts.ciphertext.slice(0, 15) },
      { ...parts, cipherSuite: "AES_GCM!" },
      { ...parts, u: bls12_381.G2.Point.ZERO.toBytes(true) },
    ];
    for (const variant of variants)
      expectTimelockError(
        () => decodeTimelockCiphertext(encodeTimelockCiphertext(variant)),
        ["malformed-ciphertext"],
      );
  });

  it("refuses malformed signatures and public keys with typed errors", () => {
    expectTimelockError(
      () => timelockDecrypt(ciphertext, signatureFor(1000).slice(1)),
      ["malformed-signature"],
    );
    expectTimelockError(
      () => timelockDecrypt(ciphertext, new Uint8Array(48)),
      ["malformed-signature"],
    );
    expectTimelockError(
      () => timelockEncrypt(fourUidPayload, 1, quicknetKey.slice(1)),
      ["malformed-public-key"],
    );
    expect(() => timelockEncrypt(fourUidPayload, -1, quicknetKey)).toThrow(RangeError);
    expect(() =>
      timelockEncrypt(fourUidPayload, 1, quicknetKey, { random: () => new Uint8Array(1) }),
    ).toThrow(RangeError);
  });
});

describe("a local beacon as the chain's drand", () => {
  const beacon = beaconKeypair(new TextEncoder().encode("localnet beacon seed for tests 0001"));

  it("decrypts its own ciphertexts with its round signatures, and only for that round", () => {
    const ciphertext = timelockEncrypt(fourUidPayload, 77, beacon.publicKey);
    expect(timelockDecrypt(ciphertext, signRound(beacon.secretKey, 77))).toEqual(fourUidPayload);
    expectTimelockError(
      () => timelockDecrypt(ciphertext, signRound(beacon.secretKey, 78)),
      ["decryption-failed"],
    );
    // Quicknet's real round signature belongs to another key.
    expectTimelockError(
      () => timelockDecrypt(ciphertext, signatureFor(1000)),
      ["decryption-failed"],
    );
  });
});
