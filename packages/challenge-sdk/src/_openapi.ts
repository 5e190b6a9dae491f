// The OpenAPI 3.1 document a challenge serves at /openapi.json: core's builder over the same
// TypeBox schemas that validate the routes, decorated with each route's credential, the errors
// its authentication can answer, and a submission's raw media types beside its JSON body.
import {
  type AnyRoute,
  buildOpenApi,
  ChallengeWeightsResponse,
  ErrorResponse,
  type OpenApiDocument,
  type ResponseSpec,
  toOpenApiPath,
} from "@platform/core";
import type { TSchema } from "@sinclair/typebox";
import type { RegisteredRoute } from "./challenge-router.js";
import { PLATFORM_HEADERS } from "./proxy-contract/proxy-contract.js";

const securitySchemes = {
  minerSignature: {
    type: "apiKey",
    in: "header",
    name: "X-Signature",
    description:
      "platform-request-v1 sr25519 signature with X-Hotkey, X-Nonce and X-Timestamp (docs/protocol/signing.md)",
  },
  challengeToken: {
    type: "http",
    scheme: "bearer",
    description:
      "CHALLENGE_TOKEN, with X-Platform-Challenge-Slug (or x-core-challenge-slug) naming this challenge",
  },
};

const errorSpec = (description: string): ResponseSpec => ({ description, schema: ErrorResponse });

// core's builder inlines schemas; a `$ref` object is passed through as it is.
const HTTPValidationErrorRef = {
  $ref: "#/components/schemas/HTTPValidationError",
} as unknown as ResponseSpec["schema"];

function documentedResponses(route: RegisteredRoute): Record<number, ResponseSpec> {
  const out: Record<number, ResponseSpec> = { ...(route.options.responses ?? {}) };
  if (!Object.keys(out).some((status) => Number(status) >= 200 && Number(status) < 300)) {
    out[200] = { description: "OK" };
  }
  const add = (status: number, description: string) => {
    out[status] ??= errorSpec(description);
  };
  if (route.access === "signed") {
    add(401, "Missing, malformed or invalid signature (code says which)");
    add(409, "nonce_reused: this (hotkey, nonce) was already used");
  }
  // A route's own bearer answers its refusal code (the route's own 401 description wins).
  const ownRefusal = route.bearer ? route.bearerRefusal?.code : undefined;
  if (route.access === "internal" || route.access === "bridge") {
    add(401, ownRefusal ?? "invalid_internal_token");
    add(403, "challenge_slug_mismatch");
  }
  if (route.access === "public" && route.bearer) add(401, ownRefusal ?? "invalid_token");
  if (route.access === "bridge") add(400, "missing_verified_identity or invalid_verified_identity");
  if (route.access === "bridge" && route.reserveNonce !== false) add(409, "nonce_reused");
  if (route.registered) add(403, "hotkey_not_registered");
  if (route.rateLimit) add(429, "rate_limited (Retry-After says when)");
  if (route.submission?.archive) {
    add(400, "invalid_base64, or an archive that cannot be read safely (code says which)");
    add(413, "the archive is over its size, file count or unpacked limits");
  }
  // Every route declares its 422 (the interfaces say so): a route without inputs never answers
  // it, but a client generated from the document handles it the same everywhere.
  out[422] ??= { description: "Validation Error", schema: HTTPValidationErrorRef };
  return out;
}

function securityOf(route: RegisteredRoute): string[] | undefined {
  if (route.access === "signed") return ["minerSignature"];
  if (route.access === "internal" || route.access === "bridge") return ["challengeToken"];
  // A public route's own bearer is the author's scheme: its 401 is documented, not a scheme.
  return undefined;
}

function docRoute(route: RegisteredRoute): AnyRoute {
  const { options } = route;
  const security = securityOf(route);
  const raw = route.submission?.raw ?? [];
  return {
    method: route.methods,
    path: route.path,
    summary: options.summary,
    description: options.description,
    tags: options.tags,
    operationId: options.operationId,
    params: options.params,
    query: options.query,
    headers: options.headers,
    // A raw-only submission documents its media types as a raw body.
    body: options.body ?? (raw.length > 0 ? "raw" : undefined),
    contentTypes: options.body === undefined && raw.length > 0 ? raw : options.contentTypes,
    responses: documentedResponses(route),
    hidden: options.hidden,
    ...(security ? { security } : {}),
    handler: () => undefined,
  };
}

type Operation = {
  parameters?: unknown[];
  requestBody?: { content: Record<string, unknown> };
};

/** What core's builder cannot know: a submission's raw types beside JSON, the bridge's file name. */
function decorate(document: OpenApiDocument, routes: readonly RegisteredRoute[]): void {
  for (const route of routes) {
    if (route.options.hidden) continue;
    for (const method of route.methods) {
      const operation = document.paths[toOpenApiPath(route.path)]?.[method.toLowerCase()] as
        | Operation
        | undefined;
      if (!operation) continue;
      const content = operation.requestBody?.content;
      if (content && route.options.body !== undefined && route.submission) {
        for (const type of route.submission.raw) {
          content[type] = { schema: { type: "string", format: "binary" } };
        }
      }
      if (route.access === "bridge") {
        operation.parameters = [
          ...(operation.parameters ?? []),
          {
            name: PLATFORM_HEADERS.submissionFilename,
            in: "header",
            required: false,
            schema: { type: "string" },
            description: "The file name the miner gave the upload (a plain name)",
          },
        ];
      }
    }
  }
}

/** The challenge's OpenAPI document (built once, on first request). */
export function challengeOpenApi(
  info: { name: string; version: string; description?: string | undefined },
  routes: readonly RegisteredRoute[],
): OpenApiDocument {
  const document = buildOpenApi(
    {
      name: info.name,
      version: info.version,
      ...(info.description ? { description: info.description } : {}),
      securitySchemes,
    },
    routes.map(docRoute),
  );
  decorate(document, routes);
  return document;
}

// OpenAPI component names: what a `$ref` can name without escaping.
const COMPONENT_NAME = /^[A-Za-z0-9._-]+$/;
// The SDK's own components, which every challenge's error answers refer to, and the record of
// GET /internal/v1/get_weights under the name the interfaces give it.
const SDK_COMPONENTS = [
  "ValidationError",
  "HTTPValidationError",
  "ErrorResponse",
  "WeightsResponse",
];

/** Refuses, at definition time, a record name OpenAPI cannot hold or one the SDK already owns. */
export function checkNamedSchemas(schemas: Readonly<Record<string, TSchema>> | undefined): void {
  if (schemas === undefined) return;
  for (const [name, schema] of Object.entries(schemas)) {
    if (!COMPONENT_NAME.test(name)) {
      throw new TypeError(
        `defineChallenge: schema name ${JSON.stringify(name)} must match ${COMPONENT_NAME}`,
      );
    }
    if (SDK_COMPONENTS.includes(name)) {
      throw new TypeError(`defineChallenge: schema name "${name}" is the SDK's own`);
    }
    if (typeof schema !== "object" || schema === null) {
      throw new TypeError(`defineChallenge: schema "${name}" must be a TypeBox schema`);
    }
  }
}

/**
 * The document with the challenge's named records, and the SDK's `WeightsResponse`, added to
 * `components.schemas`.
 */
export function withNamedSchemas(
  document: OpenApiDocument,
  schemas: Readonly<Record<string, TSchema>> | undefined,
): OpenApiDocument {
  const named = { ...(schemas ?? {}), WeightsResponse: ChallengeWeightsResponse };
  const components = (document.components ?? {}) as { schemas?: Record<string, unknown> };
  components.schemas = {
    ...Object.fromEntries(
      Object.entries(named).map(([name, schema]) => [name, JSON.parse(JSON.stringify(schema))]),
    ),
    ...(components.schemas ?? {}),
  };
  document.components = components;
  return document;
}
