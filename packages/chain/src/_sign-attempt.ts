import type { SubmittableExtrinsic } from "@polkadot/api/types";
import type { ExtrinsicEra } from "@polkadot/types/interfaces";
import type { IKeyringPair } from "@polkadot/types/types";
import { u8aToHex } from "@polkadot/util";
import { blake2AsHex } from "@polkadot/util-crypto";
import { chooseEra } from "./_commit-era.js";
import type { SubmitterContext } from "./_reconcile-attempts.js";
import type { ChainConnection } from "./chain-client.js";
import { COMMIT_REVEAL_VERSION, commitDeathBound } from "./commit-reveal.js";
import { timelockEncrypt } from "./timelock.js";
import type { PreparedCommit, PreparedWeights } from "./weights-submitter.js";
import { encodeWeightsTlockPayload } from "./weights-tlock-payload.js";

/** An attempt sealed (a commit timelock-encrypted) and signed, ready to record and send. */
export interface SignedAttempt {
  tx: SubmittableExtrinsic<"promise">;
  nonce: number;
  /** The commit's bytes and their blake2_256 (the hash TimelockedWeightsCommitted carries). */
  sealed: { bytes: Uint8Array; hash: string } | undefined;
  eraBirth: number;
  eraDeath: number;
  /** The connection it was signed on: sent on the same one (the api's registry built it). */
  connection: ChainConnection;
}

/**
 * Seals and signs one attempt: a commit's payload timelocked to its planned round, then the
 * extrinsic signed with a mortal era born at a finalized block, which for a commit ends before
 * the block that stores commits under the next epoch (`chooseEra`).
 */
export async function signAttempt(
  ctx: SubmitterContext,
  keys: { keypair: IKeyringPair; eraPeriod: number },
  attempt: { result: PreparedWeights; commit: PreparedCommit | undefined; nonce: number },
  signal: AbortSignal | undefined,
): Promise<SignedAttempt> {
  const { client, netuid } = ctx;
  const { result, commit, nonce } = attempt;
  const sealed = commit ? seal(keys.keypair, result, commit) : undefined;
  const what = commit ? "commit_timelocked_weights" : "set_weights";
  // The era's birth right before signing: waiting for the round must not eat the era.
  const finalized = await client.finalized({ signal });
  const chosen = chooseEra({
    finalized: finalized.number,
    eraPeriod: keys.eraPeriod,
    deathBound: commit ? commitDeathBound(commit.state) : undefined,
  });
  const { tx, era, connection } = await client.call(
    `signing ${what}`,
    async (api, connection) => {
      let extrinsic: SubmittableExtrinsic<"promise">;
      if (commit && sealed) {
        const call = api.tx["subtensorModule"]?.["commitTimelockedWeights"];
        if (!call) throw new Error("the runtime has no SubtensorModule.commit_timelocked_weights");
        // The version of the payload encrypted; the local checks require the chain's
        // CommitRevealWeightsVersion to be the same, so this is the value the chain asks for.
        extrinsic = call(
          netuid,
          u8aToHex(sealed.bytes),
          commit.plan.revealRound,
          COMMIT_REVEAL_VERSION,
        ) as SubmittableExtrinsic<"promise">;
      } else {
        const call = api.tx["subtensorModule"]?.["setWeights"];
        if (!call) throw new Error("the runtime has no SubtensorModule.set_weights");
        extrinsic = call(
          netuid,
          result.uids,
          result.weights,
          result.versionKey,
        ) as SubmittableExtrinsic<"promise">;
      }
      const birthHash =
        chosen.birth === finalized.number
          ? finalized.hash
          : (await api.rpc.chain.getBlockHash(chosen.birth)).toHex();
      const mortal = api.createType("ExtrinsicEra", {
        current: chosen.birth,
        period: chosen.period,
      }) as ExtrinsicEra;
      await extrinsic.signAsync(keys.keypair, { nonce, era: mortal, blockHash: birthHash });
      return { tx: extrinsic, era: mortal, connection };
    },
    { signal },
  );
  return {
    tx,
    nonce,
    sealed,
    eraBirth: era.asMortalEra.birth(chosen.birth),
    eraDeath: era.asMortalEra.death(chosen.birth),
    connection,
  };
}

/** The payload the chain will decrypt, timelocked to the planned round. */
function seal(keypair: IKeyringPair, result: PreparedWeights, commit: PreparedCommit) {
  const payload = encodeWeightsTlockPayload({
    hotkey: keypair.publicKey,
    uids: result.uids,
    values: result.weights,
    versionKey: result.versionKey,
  });
  const bytes = timelockEncrypt(payload, commit.plan.revealRound, commit.beacon.publicKey);
  return { bytes, hash: blake2AsHex(bytes, 256) };
}
