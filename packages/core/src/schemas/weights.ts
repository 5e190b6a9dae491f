import { type Static, Type } from "@sinclair/typebox";

/** GET /internal/v1/get_weights reply of a challenge: one weight per hotkey. */
export const ChallengeWeightsResponse = Type.Object({
  challenge_slug: Type.String(),
  epoch: Type.Optional(Type.Union([Type.Integer({ minimum: 0 }), Type.Null()])),
  weights: Type.Record(Type.String(), Type.Number()),
});
export type ChallengeWeightsResponse = Static<typeof ChallengeWeightsResponse>;

/** How one challenge contributed to a weights snapshot. */
export const WeightsSource = Type.Object({
  slug: Type.String(),
  emission_percent: Type.Number(),
  status: Type.Union([Type.Literal("ok"), Type.Literal("failed"), Type.Literal("empty")]),
  epoch: Type.Union([Type.Integer(), Type.Null()]),
  hotkeys: Type.Integer({ description: "hotkeys with a positive weight after cleaning" }),
  share: Type.Number({ description: "fraction of the final vector this challenge received" }),
  error: Type.Union([Type.String(), Type.Null()]),
});
export type WeightsSource = Static<typeof WeightsSource>;

/** GET /v1/weights/latest: the aggregated vector, as uids and normalised weights, with sources. */
export const WeightsSnapshot = Type.Object({
  id: Type.Integer(),
  computed_at: Type.String({ format: "date-time" }),
  uids: Type.Array(Type.Integer({ minimum: 0 })),
  weights: Type.Array(Type.Number({ minimum: 0, maximum: 1 })),
  /** The same weights as chain u16 values (65535 = 1.0). */
  weights_u16: Type.Array(Type.Integer({ minimum: 0, maximum: 65_535 })),
  hotkeys: Type.Record(Type.String(), Type.Number()),
  burned: Type.Boolean({ description: "true when nothing was left and the weight went to uid 0" }),
  sources: Type.Array(WeightsSource),
});
export type WeightsSnapshot = Static<typeof WeightsSnapshot>;
