import {
  type App,
  type BeforeHook,
  ChallengeAdminView,
  ChallengeCreate,
  ChallengeCreateResponse,
  ChallengeUpdate,
  json,
  Slug,
} from "@platform/core";
import { Type } from "@sinclair/typebox";
import type { ChallengeStore } from "./challenge-store.js";
import { toAdminView } from "./challenge-views.js";
import { enforceImagePolicy, type ImagePolicy } from "./image-policy.js";
import {
  DEFAULT_INTERNAL_URL_POLICY,
  enforceInternalUrlPolicy,
  type InternalUrlPolicy,
} from "./internal-url-policy.js";

/** What the admin registry routes need. */
export interface AdminRoutesDeps {
  store: ChallengeStore;
  imagePolicy: ImagePolicy;
  /** Link-local and metadata addresses refused unless allowed; userinfo always refused. */
  internalUrlPolicy?: InternalUrlPolicy;
  requireAdmin: BeforeHook;
}

const SlugParams = Type.Object({ slug: Slug });
const AdminList = Type.Object({ challenges: Type.Array(ChallengeAdminView) });
const RotateResponse = Type.Object({
  challenge: ChallengeAdminView,
  challenge_token: Type.Optional(Type.String()),
  docker_broker_token: Type.Optional(Type.String()),
});
const security = ["adminToken"];
const tags = ["admin"];
const notFound = { description: "Unknown slug" };

/** Mount /v1/admin/challenges: create, read, update, the lifecycle moves and token rotation. */
export function registerAdminRoutes(
  app: App,
  {
    store,
    imagePolicy,
    internalUrlPolicy = DEFAULT_INTERNAL_URL_POLICY,
    requireAdmin,
  }: AdminRoutesDeps,
): void {
  const checkUrl = (url: string | null | undefined) => {
    if (url) enforceInternalUrlPolicy(url, internalUrlPolicy);
  };
  const before = [requireAdmin];

  app.route({
    method: "POST",
    path: "/v1/admin/challenges",
    summary: "Register a challenge; its two tokens are returned in clear this once",
    tags,
    security,
    before,
    body: ChallengeCreate,
    responses: {
      201: { description: "Created", schema: ChallengeCreateResponse },
      400: { description: "Image fails the image policy, or internal_base_url the URL policy" },
      409: { description: "Duplicate slug" },
    },
    handler: async ({ body }) => {
      enforceImagePolicy(body.image, imagePolicy);
      checkUrl(body.internal_base_url);
      const { row, tokens } = await store.create(body);
      return json({ challenge: toAdminView(row), ...tokens }, { status: 201 });
    },
  });

  app.route({
    method: "GET",
    path: "/v1/admin/challenges",
    summary: "List every challenge, drafts included",
    tags,
    security,
    before,
    responses: { 200: { description: "OK", schema: AdminList } },
    handler: async () => ({ challenges: (await store.list()).map(toAdminView) }),
  });

  app.route({
    method: "GET",
    path: "/v1/admin/challenges/:slug",
    summary: "One challenge, as an admin sees it",
    tags,
    security,
    before,
    params: SlugParams,
    responses: { 200: { description: "OK", schema: ChallengeAdminView }, 404: notFound },
    handler: async ({ params }) => toAdminView(await store.get(params.slug)),
  });

  app.route({
    method: "PATCH",
    path: "/v1/admin/challenges/:slug",
    summary: "Change any field but the slug",
    tags,
    security,
    before,
    params: SlugParams,
    body: ChallengeUpdate,
    responses: {
      200: { description: "OK", schema: ChallengeAdminView },
      400: { description: "Image or internal_base_url fails its policy" },
      404: notFound,
    },
    handler: async ({ params, body }) => {
      if (body.image !== undefined) enforceImagePolicy(body.image, imagePolicy);
      checkUrl(body.internal_base_url);
      return toAdminView(await store.update(params.slug, body));
    },
  });

  const move = (action: string, status: "active" | "inactive", summary: string) =>
    app.route({
      method: "POST",
      path: `/v1/admin/challenges/:slug/${action}`,
      summary,
      tags,
      security,
      before,
      params: SlugParams,
      responses: { 200: { description: "OK", schema: ChallengeAdminView }, 404: notFound },
      handler: async ({ params }) => toAdminView(await store.setStatus(params.slug, status)),
    });
  move("activate", "active", "Serve traffic and count in weights");
  move("deactivate", "inactive", "Stop serving traffic and weights; stays in the public registry");

  app.route({
    method: "POST",
    path: "/v1/admin/challenges/:slug/disable",
    summary: "Kill switch: no traffic, no weights, shown as disabled with its reason",
    tags,
    security,
    before,
    params: SlugParams,
    query: Type.Object({ reason: Type.Optional(Type.String({ maxLength: 500 })) }),
    responses: { 200: { description: "OK", schema: ChallengeAdminView }, 404: notFound },
    handler: async ({ params, query }) =>
      toAdminView(await store.setStatus(params.slug, "disabled", query.reason ?? null)),
  });

  app.route({
    method: "POST",
    path: "/v1/admin/challenges/:slug/tokens/rotate",
    summary:
      "Replace the challenge token, the broker token, or both; new values are returned this once",
    tags,
    security,
    before,
    params: SlugParams,
    query: Type.Object({
      token: Type.Union([Type.Literal("challenge"), Type.Literal("broker"), Type.Literal("both")], {
        default: "both",
      }),
    }),
    responses: { 200: { description: "OK", schema: RotateResponse }, 404: notFound },
    handler: async ({ params, query }) => {
      const kinds =
        query.token === "both" ? (["challenge", "broker"] as const) : ([query.token] as const);
      const { row, tokens } = await store.rotateTokens(params.slug, kinds);
      return { challenge: toAdminView(row), ...tokens };
    },
  });
}
