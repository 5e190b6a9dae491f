import { CloneType, type Static, type TSchema, Type } from "@sinclair/typebox";
import { ENV_NAME, keyedRecord } from "./_keyed-record.js";
import { Slug } from "./slug.js";

/** Lifecycle states of a challenge. */
export const ChallengeStatus = Type.Union(
  [
    Type.Literal("active"),
    Type.Literal("inactive"),
    Type.Literal("disabled"),
    Type.Literal("draft"),
  ],
  { description: "active serves traffic and weights; draft is hidden from the public registry" },
);
export type ChallengeStatus = Static<typeof ChallengeStatus>;

/** Resources a challenge's own container gets (defaults are the master's). */
export const ChallengeResources = Type.Object(
  {
    cpus: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 256 })),
    memory_mb: Type.Optional(Type.Integer({ minimum: 64, maximum: 4_194_304 })),
    gpus: Type.Optional(Type.Integer({ minimum: 0, maximum: 16 })),
    pids_limit: Type.Optional(Type.Integer({ minimum: 16, maximum: 65_536 })),
  },
  { additionalProperties: false },
);
export type ChallengeResources = Static<typeof ChallengeResources>;

/** Plain environment for a challenge container (public: never put secrets here). */
export const ChallengeEnv = keyedRecord(ENV_NAME, Type.String({ maxLength: 8192 }));

/** Named Docker volumes mounted into the challenge container: {volume name: absolute path}. */
export const ChallengeVolumes = keyedRecord(
  "^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,127}$",
  Type.String({ pattern: "^/[^\\0]*$", maxLength: 1024 }),
);

/** Secret values by name; write-only: views only ever show the names. */
export const ChallengeSecrets = keyedRecord(ENV_NAME, Type.String({ maxLength: 65_536 }));

/** Free-form metadata; keys that look secret are filtered from public views. */
export const ChallengeMetadata = keyedRecord("^[^\\u0000-\\u001f]{1,128}$", Type.Unknown());

const Capabilities = Type.Array(Type.String({ pattern: "^[a-z0-9_.-]{1,64}$" }), { maxItems: 64 });
const BaseUrl = Type.String({ pattern: "^https?://[^\\s]+$", maxLength: 2048 });

/** POST /v1/admin/challenges body. */
export const ChallengeCreate = Type.Object(
  {
    slug: Slug,
    name: Type.String({ minLength: 1, maxLength: 128 }),
    image: Type.String({ minLength: 1, maxLength: 512 }),
    version: Type.String({ minLength: 1, maxLength: 128 }),
    emission_percent: Type.Number({ minimum: 0, maximum: 100, default: 0 }),
    status: Type.Optional(ChallengeStatus),
    description: Type.Optional(Type.Union([Type.String({ maxLength: 4000 }), Type.Null()])),
    api_version: Type.String({ minLength: 1, maxLength: 16, default: "1.0" }),
    internal_base_url: Type.Optional(Type.Union([BaseUrl, Type.Null()])),
    required_capabilities: Type.Optional(Capabilities),
    resources: Type.Optional(ChallengeResources),
    volumes: Type.Optional(ChallengeVolumes),
    env: Type.Optional(ChallengeEnv),
    secrets: Type.Optional(ChallengeSecrets),
    metadata: Type.Optional(ChallengeMetadata),
  },
  { additionalProperties: false },
);
export type ChallengeCreate = Static<typeof ChallengeCreate>;

/** The capabilities a challenge is assumed to have when the create body names none. */
export const DEFAULT_REQUIRED_CAPABILITIES = ["get_weights", "proxy_routes"] as const;

/** A deep copy of `schema` without `default` keywords. */
function withoutDefaults<T extends TSchema>(schema: T): T {
  // CloneType keeps TypeBox's symbol keys, which the compiled validators need.
  const copy = CloneType(schema) as unknown as Record<string, unknown>;
  const strip = (node: unknown): void => {
    if (!node || typeof node !== "object") return;
    if (!Array.isArray(node)) delete (node as Record<string, unknown>).default;
    for (const value of Object.values(node)) strip(value);
  };
  strip(copy);
  return copy as unknown as T;
}

/**
 * PATCH /v1/admin/challenges/{slug} body: every create field but the slug, all optional, and
 * with NO defaults: a field the body leaves out must stay as it is, not reset to create's default.
 */
export const ChallengeUpdate = withoutDefaults(
  Type.Partial(Type.Omit(ChallengeCreate, ["slug"]), { additionalProperties: false }),
);
export type ChallengeUpdate = Static<typeof ChallengeUpdate>;

/** What the public registry shows of one challenge (no secret values, no tokens). */
export const RegistryChallenge = Type.Object({
  slug: Type.String(),
  name: Type.String(),
  image: Type.String(),
  version: Type.String(),
  emission_percent: Type.Number(),
  status: ChallengeStatus,
  description: Type.Union([Type.String(), Type.Null()]),
  metadata: Type.Record(Type.String(), Type.Unknown()),
  resources: Type.Record(Type.String(), Type.Unknown()),
  volumes: Type.Record(Type.String(), Type.Unknown()),
  env: Type.Record(Type.String(), Type.Unknown()),
  internal_base_url: Type.String(),
  public_proxy_base_path: Type.String(),
  required_capabilities: Type.Array(Type.String()),
  secrets: Type.Array(Type.String(), { description: "names only" }),
});
export type RegistryChallenge = Static<typeof RegistryChallenge>;

/** GET /v1/registry. */
export const RegistryResponse = Type.Object({
  network: Type.String({ default: "platform" }),
  api_version: Type.String({ default: "1.0" }),
  master_uid: Type.Integer({ default: 0 }),
  challenges: Type.Array(RegistryChallenge),
});
export type RegistryResponse = Static<typeof RegistryResponse>;

/** The admin's view of a challenge: everything but secret values and clear tokens. */
export const ChallengeAdminView = Type.Composite([
  RegistryChallenge,
  Type.Object({
    api_version: Type.String(),
    challenge_token_hint: Type.String(),
    docker_broker_token_hint: Type.String(),
    created_at: Type.String({ format: "date-time" }),
    updated_at: Type.String({ format: "date-time" }),
  }),
]);
export type ChallengeAdminView = Static<typeof ChallengeAdminView>;

/** 201 answer of create: the two tokens in clear, exactly once. */
export const ChallengeCreateResponse = Type.Object({
  challenge: ChallengeAdminView,
  challenge_token: Type.String(),
  docker_broker_token: Type.String(),
});
export type ChallengeCreateResponse = Static<typeof ChallengeCreateResponse>;

/** Answer of pull, restart and status. */
export const RuntimeOperationResponse = Type.Object({
  slug: Type.String(),
  operation: Type.String(),
  status: Type.String(),
  detail: Type.Union([Type.String(), Type.Null()]),
});
export type RuntimeOperationResponse = Static<typeof RuntimeOperationResponse>;
