import type { ApiPromise } from "@polkadot/api";
import type { Codec } from "@polkadot/types/types";
import { u8aToHex } from "@polkadot/util";

// The minimum stake to set or commit weights, computed as the chain computes it
// (`check_weights_min_stake`, lib.rs; `get_stake_weights_for_hotkey_on_subnet`,
// `get_inherited_for_hotkey_on_subnet`, `get_tao_inherited_for_hotkey_on_subnet`, `get_tao_weight`,
// staking/stake_utils.rs, v3.3.13-393 and v3.4.9-424 alike): the hotkey's alpha on the subnet and
// its TAO on root, each less what it gives its children and plus what its parents give it, the TAO
// scaled by `TaoWeight`; at least `StakeThreshold`. The fixed-point steps (U96F32 shares, I64F64
// total) are reproduced exactly with integers, so the local verdict is the chain's.

const U64_MAX = (1n << 64n) - 1n;
const I64F64_MAX = (1n << 127n) - 1n;
const ROOT_NETUID = 0;

/** What the stake check reads for one hotkey on one subnet. */
export interface StakeInputs {
  /** `TotalHotkeyAlpha(hotkey, netuid)`. */
  alpha: bigint;
  /** `TotalHotkeyAlpha(hotkey, 0)`: its TAO on root. */
  rootTao: bigint;
  /** `ChildKeys(hotkey, netuid)` proportions (u64, `u64::MAX` = all). */
  childProportions: bigint[];
  /** `ParentKeys(hotkey, netuid)`: each parent's proportion and its alpha and root TAO. */
  parents: { proportion: bigint; alpha: bigint; rootTao: bigint }[];
  /** `TaoWeight` (u64, `u64::MAX` = 1). */
  taoWeight: bigint;
}

// U96F32 `from_num(p) / from_num(u64::MAX)`: the share in units of 2^-32, truncated.
const share = (proportion: bigint) => (proportion << 32n) / U64_MAX;

// `get_inherited_for_hotkey_on_subnet` / `..._tao_...`: the result of the U96F32 arithmetic,
// truncated to u64.
function inherited(own: bigint, children: bigint[], fromParents: bigint[][]): bigint {
  let toChildren = 0n;
  for (const proportion of children) toChildren += own * share(proportion);
  let fromParentsRaw = 0n;
  for (const [proportion, parentStake] of fromParents) {
    fromParentsRaw += (parentStake as bigint) * share(proportion as bigint);
  }
  const ownRaw = own << 32n;
  const kept = ownRaw > toChildren ? ownRaw - toChildren : 0n;
  const total = (kept + fromParentsRaw) >> 32n;
  return total > U64_MAX ? U64_MAX : total;
}

/**
 * `get_stake_weights_for_hotkey_on_subnet(hotkey, netuid).0` as an I64F64 raw value (units of
 * 2^-64): inherited alpha plus inherited root TAO times `TaoWeight`.
 */
export function weightsStakeRaw(netuid: number, inputs: StakeInputs): bigint {
  const alpha =
    netuid === ROOT_NETUID
      ? inputs.alpha
      : inherited(
          inputs.alpha,
          inputs.childProportions,
          inputs.parents.map((p) => [p.proportion, p.alpha]),
        );
  const tao = inherited(
    inputs.rootTao,
    inputs.childProportions,
    inputs.parents.map((p) => [p.proportion, p.rootTao]),
  );
  const taoWeight = share(inputs.taoWeight); // U96F32 raw
  // I64F64: alpha << 64, plus tao · taoWeight (raw 2^-32) << 32; saturating at i64::MAX.
  const total = (alpha << 64n) + ((tao * taoWeight) << 32n);
  return total > I64F64_MAX ? I64F64_MAX : total;
}

/** The stake as the chain weighs it, in whole units (the I64F64 truncated). */
export function weightsStake(netuid: number, inputs: StakeInputs): bigint {
  return weightsStakeRaw(netuid, inputs) >> 64n;
}

/** `total_stake >= StakeThreshold`, compared in I64F64 as the chain does. */
export function meetsStakeThreshold(
  netuid: number,
  inputs: StakeInputs,
  threshold: bigint,
): boolean {
  return weightsStakeRaw(netuid, inputs) >= threshold << 64n;
}

/** A hotkey's stake check, read from the chain. */
export interface WeightsStakeRead {
  /** 0x public key of the hotkey. */
  hotkey: string;
  /** The stake as the chain weighs it (whole units, rounded down). */
  stake: bigint;
  /** `StakeThreshold`. */
  threshold: bigint;
  /** Whether the chain's comparison passes (before any owner exemption). */
  meets: boolean;
}

type Decorated = Awaited<ReturnType<ApiPromise["at"]>>;

const value = async (at: Decorated, item: string, ...args: unknown[]): Promise<Codec> => {
  const entry = at.query["subtensorModule"]?.[item];
  if (!entry) throw new Error(`the chain's runtime has no SubtensorModule.${item}`);
  return (await entry(...args)) as Codec;
};
const big = async (at: Decorated, item: string, ...args: unknown[]) =>
  BigInt((await value(at, item, ...args)).toString());
const pairs = async (at: Decorated, item: string, ...args: unknown[]) =>
  [...((await value(at, item, ...args)) as unknown as [Codec, Codec][])].map(
    ([proportion, account]) => ({
      proportion: BigInt(proportion.toString()),
      account: u8aToHex(account.toU8a()),
    }),
  );

const STAKE_ITEMS = ["totalHotkeyAlpha", "childKeys", "parentKeys", "taoWeight", "stakeThreshold"];

/**
 * Reads what `check_weights_min_stake` reads for `hotkey` (0x key) on `netuid`, at `at`;
 * undefined on a runtime without those storage items (the chain then checks what it checks).
 */
export async function readWeightsStake(
  at: Decorated,
  netuid: number,
  hotkey: string,
): Promise<WeightsStakeRead | undefined> {
  if (STAKE_ITEMS.some((item) => !at.query["subtensorModule"]?.[item])) return undefined;
  const [alpha, rootTao, children, parents, taoWeight, threshold] = await Promise.all([
    big(at, "totalHotkeyAlpha", hotkey, netuid),
    big(at, "totalHotkeyAlpha", hotkey, ROOT_NETUID),
    pairs(at, "childKeys", hotkey, netuid),
    pairs(at, "parentKeys", hotkey, netuid),
    big(at, "taoWeight"),
    big(at, "stakeThreshold"),
  ]);
  const parentStakes = await Promise.all(
    parents.map(async (p) => ({
      proportion: p.proportion,
      alpha: await big(at, "totalHotkeyAlpha", p.account, netuid),
      rootTao: await big(at, "totalHotkeyAlpha", p.account, ROOT_NETUID),
    })),
  );
  const inputs: StakeInputs = {
    alpha,
    rootTao,
    childProportions: children.map((c) => c.proportion),
    parents: parentStakes,
    taoWeight,
  };
  return {
    hotkey,
    stake: weightsStake(netuid, inputs),
    threshold,
    meets: meetsStakeThreshold(netuid, inputs, threshold),
  };
}
