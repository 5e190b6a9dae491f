import type { TSchema } from "@sinclair/typebox";
import type { AnyRoute, AppOptions } from "./app.js";

/** An OpenAPI 3.1 document (kept loose: it is generated, then served as JSON). */
export type OpenApiDocument = Record<string, unknown> & {
  openapi: "3.1.0";
  paths: Record<string, Record<string, unknown>>;
};

const validationErrorSchemas = {
  ValidationError: {
    type: "object",
    required: ["loc", "msg", "type"],
    properties: {
      loc: { type: "array", items: { anyOf: [{ type: "string" }, { type: "integer" }] } },
      msg: { type: "string" },
      type: { type: "string" },
    },
  },
  HTTPValidationError: {
    type: "object",
    properties: {
      detail: { type: "array", items: { $ref: "#/components/schemas/ValidationError" } },
    },
  },
  ErrorResponse: {
    type: "object",
    required: ["detail", "code"],
    properties: { detail: { type: "string" }, code: { type: "string" } },
  },
};

/** JSON Schema without TypeBox's symbol keys (JSON round trip drops them). */
function plain(schema: TSchema): Record<string, unknown> {
  return JSON.parse(JSON.stringify(schema)) as Record<string, unknown>;
}

/** `/v1/items/:id` and greedy `/:path+` become OpenAPI's `/v1/items/{id}`. */
export function toOpenApiPath(path: string): string {
  return path.replace(/:([A-Za-z_][A-Za-z0-9_]*)[+*?]?/g, "{$1}");
}

function parameters(schema: TSchema | undefined, where: "path" | "query" | "header") {
  if (!schema?.properties) return [];
  const required = new Set<string>((schema.required as string[] | undefined) ?? []);
  return Object.entries(schema.properties as Record<string, TSchema>).map(([name, property]) => ({
    name,
    in: where,
    required: where === "path" || required.has(name),
    schema: plain(property),
    ...(property.description ? { description: property.description } : {}),
  }));
}

function requestBody(route: AnyRoute) {
  if (route.body === undefined) return undefined;
  if (typeof route.body === "object") {
    return { required: true, content: { "application/json": { schema: plain(route.body) } } };
  }
  const types = route.contentTypes?.length ? route.contentTypes : ["application/octet-stream"];
  return {
    required: true,
    content: Object.fromEntries(
      types.map((type) => [type, { schema: { type: "string", format: "binary" } }]),
    ),
  };
}

function responses(route: AnyRoute) {
  const out: Record<string, unknown> = {};
  for (const [status, spec] of Object.entries(route.responses ?? { 200: { description: "OK" } })) {
    out[status] = {
      description: spec.description,
      ...(spec.schema
        ? { content: { [spec.contentType ?? "application/json"]: { schema: plain(spec.schema) } } }
        : {}),
    };
  }
  if (
    route.params ||
    route.query ||
    route.headers ||
    (route.body && typeof route.body === "object")
  ) {
    out["422"] ??= {
      description: "Validation Error",
      content: {
        "application/json": { schema: { $ref: "#/components/schemas/HTTPValidationError" } },
      },
    };
  }
  return out;
}

/** Build the OpenAPI 3.1 document of an app from its routes' own schemas. */
export function buildOpenApi(options: AppOptions, routes: readonly AnyRoute[]): OpenApiDocument {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    if (route.hidden) continue;
    const path = toOpenApiPath(route.path);
    const methods = typeof route.method === "string" ? [route.method] : route.method;
    for (const method of methods) {
      const body = requestBody(route);
      paths[path] ??= {};
      paths[path][method.toLowerCase()] = {
        ...(route.operationId ? { operationId: route.operationId } : {}),
        ...(route.summary ? { summary: route.summary } : {}),
        ...(route.description ? { description: route.description } : {}),
        ...(route.tags ? { tags: route.tags } : {}),
        parameters: [
          ...parameters(route.params, "path"),
          ...parameters(route.query, "query"),
          ...parameters(route.headers, "header"),
        ],
        ...(body ? { requestBody: body } : {}),
        responses: responses(route),
        ...(route.security ? { security: route.security.map((name) => ({ [name]: [] })) } : {}),
      };
    }
  }
  return {
    openapi: "3.1.0",
    info: {
      title: options.name,
      version: options.version,
      ...(options.description ? { description: options.description } : {}),
    },
    paths,
    components: {
      schemas: validationErrorSchemas,
      ...(options.securitySchemes ? { securitySchemes: options.securitySchemes } : {}),
    },
  };
}
