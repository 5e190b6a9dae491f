import { createHash } from "node:crypto";
import { connect } from "node:net";
import fc from "fast-check";
import { Pool } from "undici";
import {
  hostileString,
  type JsonSchema,
  type RefResolver,
  refResolver,
  TRAVERSAL_SEGMENTS,
  UNICODE_STRINGS,
  validValueOf,
  wrongTypeOf,
} from "./_openapi-arbitraries.js";
import type { TestChallenge } from "./start-test-challenge.js";

/** A request the fuzz suite is about to send (what a credential signs). */
export interface FuzzRequest {
  method: string;
  /** Path and query exactly as sent, e.g. `/v1/scores/7?limit=2`. */
  target: string;
  body?: string;
  /** The route it was generated for, e.g. `POST /v1/scores`. */
  route: string;
  /** What was generated: `valid`, `unauthenticated`, `wrong-type`, `missing-required`, `traversal`... */
  kind: string;
}

/** Credentials to get past a server's authentication on some requests. */
export interface FuzzCredential {
  /** OpenAPI security scheme names it satisfies (e.g. `adminToken`, `minerSignature`). */
  schemes?: readonly string[];
  /** Path prefixes (or patterns) of routes to send it to even when they declare no scheme. */
  paths?: readonly (string | RegExp)[];
  /** Fixed headers, or headers computed per request (e.g. a signature over its exact bytes). */
  headers: Record<string, string> | ((request: FuzzRequest) => Record<string, string>);
}

/** Options of {@link fuzzOpenApi}. */
export interface FuzzOpenApiOptions {
  /** Where the server listens, e.g. `http://127.0.0.1:43121`. */
  baseUrl: string;
  /** The OpenAPI document; fetched from `baseUrl + openapiPath` when absent. */
  openapi?: Record<string, unknown>;
  /** Default `/openapi.json`. */
  openapiPath?: string;
  /** Credentials, so part of the requests reach validation and handlers. */
  credentials?: readonly FuzzCredential[];
  /** Values that must never appear in a response body or header (tokens, keys, passwords). */
  secrets?: readonly string[];
  /** Addresses and paths that must never appear in a response (an upstream's `127.0.0.1:port`). */
  internalAddresses?: readonly string[];
  /** Known-good values for path parameters by name (e.g. `{ slug: ["echo"] }`), mixed in. */
  pathValues?: Record<string, readonly string[]>;
  /** Routes to leave out, as `"GET /v1/boom"` (the OpenAPI path) or a pattern on that string. */
  exclude?: readonly (string | RegExp)[];
  /** Seed of every generator (default: FUZZ_SEED from the environment, else 1). */
  seed?: number;
  /** Valid requests per route (default 6). */
  validRuns?: number;
  /** Invalid requests per route (default 14). */
  invalidRuns?: number;
  /** Stop sending after this long, reporting `timedOut` (default 20 s). */
  timeLimitMs?: number;
  /** Requests in flight at once (default 4). */
  concurrency?: number;
  /** Length of the "huge string" values (default 70,000 characters). */
  hugeLength?: number;
  /**
   * Findings that are the documented contract, not defects (each with its reason): left out of
   * `findings` and counted in `allowed`. E.g. a registry that publishes `internal_base_url`.
   */
  allow?: readonly { kind: FuzzFindingKind; route: string | RegExp; reason: string }[];
}

/** Why a response failed the suite. */
export type FuzzFindingKind =
  | "server_error"
  | "stack_trace"
  | "internal_address"
  | "secret"
  | "no_response";

/** One response that broke a rule, with the request that produced it. */
export interface FuzzFinding {
  kind: FuzzFindingKind;
  route: string;
  method: string;
  target: string;
  requestKind: string;
  /** The status, when there was a response. */
  status?: number;
  /** What matched (a secret is never quoted: only where it was found). */
  detail: string;
}

/** Requests sent to one route and the statuses they got. */
export interface FuzzRouteCoverage {
  /** e.g. `POST /v1/scores` (`* /v1/scores` for the odd-method probes of a path). */
  route: string;
  requests: number;
  statuses: Record<string, number>;
}

/** What {@link fuzzOpenApi} did and found. */
export interface FuzzReport {
  ok: boolean;
  seed: number;
  /** Requests sent in all. */
  requests: number;
  routes: FuzzRouteCoverage[];
  findings: FuzzFinding[];
  /** Findings matched by `allow` (not failures). */
  allowed: number;
  /** True when the time limit stopped the run before every generated request was sent. */
  timedOut: boolean;
  durationMs: number;
}

/** Methods no route declares; every server must answer them (405/501 or 404), never 5xx. */
const ODD_METHODS = ["TRACE", "TRACK", "PROPFIND", "PATCH", "OPTIONS", "FOO"] as const;
const DECLARED = ["get", "put", "post", "delete", "patch", "head", "options"] as const;

// A response line "at fn (/path/file.ts:12:3)" or "at /path/file.js:9": a leaked stack trace.
const STACK_TRACE = [
  /\bat [^\n]*\.(?:[cm]?[jt]sx?):\d+/,
  /\bat (?:async )?[\w.<>$]+ \((?:node:|file:)/,
];
// An absolute path to a source file, or a dependency folder: where the server's code lives.
const FILE_PATH =
  /(?:file:\/\/)?(?:\/[\w.@+-]+)+\/[\w.@+-]+\.(?:[cm]?[jt]sx?|json|node)\b|[\\/]node_modules[\\/]/;

interface Operation {
  method: string;
  path: string;
  route: string;
  parameters: { name: string; in: string; required: boolean; schema: JsonSchema }[];
  body?: { type: string; schema?: JsonSchema };
  security: string[];
}

interface Planned extends FuzzRequest {
  headers: Record<string, string>;
  withCredentials: boolean;
  /** Send over a raw socket (methods fetch clients refuse). */
  raw?: boolean;
}

function operationsOf(document: Record<string, unknown>): Operation[] {
  const out: Operation[] = [];
  const paths = (document["paths"] ?? {}) as Record<string, Record<string, JsonSchema>>;
  for (const [path, item] of Object.entries(paths)) {
    for (const method of DECLARED) {
      const op = item[method];
      if (!op) continue;
      const content = (op["requestBody"] as JsonSchema | undefined)?.["content"] as
        | Record<string, JsonSchema>
        | undefined;
      const types = Object.keys(content ?? {});
      const type = types.find((t) => t.includes("json")) ?? types[0];
      const security = ((op["security"] ?? []) as Record<string, unknown>[]).flatMap(Object.keys);
      const parameters = ((op["parameters"] ?? []) as JsonSchema[]).map((p) => ({
        name: String(p["name"]),
        in: String(p["in"]),
        required: p["required"] === true,
        schema: (p["schema"] ?? {}) as JsonSchema,
      }));
      // A path parameter the route does not describe (e.g. a proxy's `{path}`) is still one.
      for (const [, name] of path.matchAll(/\{([^}]+)\}/g)) {
        if (!parameters.some((p) => p.in === "path" && p.name === name))
          parameters.push({ name: name!, in: "path", required: true, schema: { type: "string" } });
      }
      out.push({
        method: method.toUpperCase(),
        path,
        route: `${method.toUpperCase()} ${path}`,
        parameters,
        ...(type
          ? { body: { type, schema: content?.[type]?.["schema"] as JsonSchema | undefined } }
          : {}),
        security,
      });
    }
  }
  return out;
}

const text = (value: unknown): string =>
  typeof value === "string" ? value : value === undefined ? "" : JSON.stringify(value);

function seedOf(seed: number, route: string, salt: string): number {
  return createHash("sha256").update(`${seed}\0${route}\0${salt}`).digest().readInt32LE(0);
}

/** Generated parts of one request before it becomes a target. */
interface Parts {
  path: Record<string, string>;
  query: [string, string][];
  headers: Record<string, string>;
  body?: string;
  contentType?: string;
  kind: string;
}

/** encodeURIComponent that sends a lone surrogate as its (invalid UTF-8) WTF-8 bytes instead of throwing. */
function percentEncode(value: string): string {
  return value.replace(/[\s\S]/gu, (char) => {
    const code = char.codePointAt(0)!;
    if (code < 0xd800 || code > 0xdfff || char.length > 1) return encodeURIComponent(char);
    return `%${(0xe0 | (code >> 12)).toString(16)}%${(0x80 | ((code >> 6) & 0x3f)).toString(16)}%${(0x80 | (code & 0x3f)).toString(16)}`.toUpperCase();
  });
}

function encodeQuery(pairs: [string, string][]): string {
  if (pairs.length === 0) return "";
  return `?${pairs.map(([k, v]) => `${percentEncode(k)}=${percentEncode(v)}`).join("&")}`;
}

function queryPairs(name: string, value: unknown): [string, string][] {
  if (value === undefined) return [];
  if (Array.isArray(value)) return value.map((v) => [name, text(v)]);
  return [[name, text(value)]];
}

// Header values a client can send: printable ASCII only (anything else is refused client-side).
const headerSafe = (value: string) => value.replace(/[^\x20-\x7e]/g, "?").slice(0, 4_000);

function validParts(op: Operation, resolve: RefResolver, options: FuzzOpenApiOptions) {
  const known = options.pathValues ?? {};
  const param = (p: Operation["parameters"][number]) => {
    const generated = validValueOf(p.schema, resolve);
    if (p.in === "path") {
      const values = known[p.name];
      const asText = generated.map((v) => percentEncode(text(v)) || "x");
      return values?.length ? fc.oneof(fc.constantFrom(...values), asText) : asText;
    }
    return p.required ? generated : fc.option(generated, { nil: undefined });
  };
  const params = fc.record(Object.fromEntries(op.parameters.map((p) => [p.name, param(p)])));
  const body = op.body?.type.includes("json")
    ? validValueOf(op.body.schema, resolve).map((v) => JSON.stringify(v))
    : op.body
      ? fc.string({ maxLength: 64 })
      : fc.constant(undefined);
  return fc.tuple(params, body).map(([values, bodyText]): Parts => {
    const parts: Parts = { path: {}, query: [], headers: {}, kind: "valid" };
    for (const p of op.parameters) {
      const v = (values as Record<string, unknown>)[p.name];
      if (p.in === "path") parts.path[p.name] = String(v);
      else if (p.in === "query") parts.query.push(...queryPairs(p.name, v));
      else if (p.in === "header" && v !== undefined) parts.headers[p.name] = headerSafe(text(v));
    }
    if (bodyText !== undefined) {
      parts.body = bodyText;
      parts.contentType = op.body?.type;
    }
    return parts;
  });
}

type Mutation = (parts: Parts) => fc.Arbitrary<Parts>;

function mutations(op: Operation, resolve: RefResolver, hugeLength: number): Mutation[] {
  const out: Mutation[] = [];
  const pathParams = op.parameters.filter((p) => p.in === "path");
  const queryParams = op.parameters.filter((p) => p.in === "query");
  const requiredQuery = queryParams.filter((p) => p.required);
  const bodySchema = op.body?.schema ? resolve(op.body.schema) : undefined;
  const props = (bodySchema?.["properties"] ?? {}) as Record<string, JsonSchema>;
  const requiredProps = ((bodySchema?.["required"] ?? []) as string[]).filter((n) => n in props);
  const withBody = (parts: Parts, kind: string, body: string, contentType = op.body?.type) => ({
    ...parts,
    kind,
    body,
    contentType: contentType ?? "application/json",
  });

  if (pathParams.length > 0) {
    out.push((parts) =>
      fc
        .tuple(fc.constantFrom(...pathParams), fc.constantFrom(...TRAVERSAL_SEGMENTS))
        .map(([p, segment]) => ({
          ...parts,
          kind: "traversal",
          path: { ...parts.path, [p.name]: segment },
        })),
    );
    out.push((parts) =>
      fc.tuple(fc.constantFrom(...pathParams), hostileString(hugeLength / 20)).map(([p, v]) => ({
        ...parts,
        kind: "hostile-path-param",
        path: { ...parts.path, [p.name]: percentEncode(v) || "%20" },
      })),
    );
  }
  if (queryParams.length > 0) {
    out.push((parts) =>
      fc.tuple(fc.constantFrom(...queryParams), hostileString(hugeLength / 20)).map(([p, v]) => ({
        ...parts,
        kind: "hostile-query",
        query: [...parts.query.filter(([k]) => k !== p.name), [p.name, v] as [string, string]],
      })),
    );
    out.push((parts) =>
      fc.constantFrom(...queryParams).map((p) => ({
        ...parts,
        kind: "repeated-query",
        query: [
          ...parts.query,
          [p.name, "1"] as [string, string],
          [p.name, "2"] as [string, string],
        ],
      })),
    );
  }
  if (requiredQuery.length > 0) {
    out.push((parts) =>
      fc.constantFrom(...requiredQuery).map((p) => ({
        ...parts,
        kind: "missing-required",
        query: parts.query.filter(([k]) => k !== p.name),
      })),
    );
  }
  if (op.body?.type.includes("json")) {
    const parsed = (parts: Parts): Record<string, unknown> => {
      const v = parts.body === undefined ? undefined : (JSON.parse(parts.body) as unknown);
      return v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
    };
    out.push((parts) =>
      wrongTypeOf(op.body?.schema, resolve).map((v) =>
        withBody(parts, "wrong-type", JSON.stringify(v)),
      ),
    );
    const names = Object.keys(props);
    if (names.length > 0) {
      out.push((parts) =>
        fc
          .constantFrom(...names)
          .chain((name) =>
            wrongTypeOf(props[name], resolve).map((v) =>
              withBody(parts, "wrong-type", JSON.stringify({ ...parsed(parts), [name]: v })),
            ),
          ),
      );
      out.push((parts) =>
        fc
          .tuple(fc.constantFrom(...names), hostileString(hugeLength))
          .map(([name, v]) =>
            withBody(parts, "hostile-field", JSON.stringify({ ...parsed(parts), [name]: v })),
          ),
      );
    }
    if (requiredProps.length > 0) {
      out.push((parts) =>
        fc.constantFrom(...requiredProps).map((name) => {
          const { [name]: _dropped, ...rest } = parsed(parts);
          return withBody(parts, "missing-required", JSON.stringify(rest));
        }),
      );
    }
    out.push((parts) =>
      fc
        .constantFrom("__proto__", "constructor", "prototype", "extra", "")
        .map((key) =>
          withBody(
            parts,
            "extra-property",
            `${JSON.stringify(parsed(parts)).slice(0, -1)}${names.length ? "," : ""}${JSON.stringify(key)}:{"polluted":true}}`.replace(
              /^\{,/,
              "{",
            ),
          ),
        ),
    );
  }
  if (op.body) {
    out.push((parts) =>
      fc
        .constantFrom(
          "",
          "{",
          "null",
          "[]",
          "1e999",
          '"\\ud800"',
          `${"[".repeat(5_000)}${"]".repeat(5_000)}`,
          "\u0000\u0001\u0002",
          "A".repeat(hugeLength),
        )
        .map((body) => withBody(parts, "malformed-body", body)),
    );
    out.push((parts) =>
      fc
        .constantFrom("text/plain", "application/x-www-form-urlencoded", "multipart/form-data", "")
        .map((contentType) =>
          withBody(parts, "wrong-content-type", parts.body ?? "x=1", contentType),
        ),
    );
  } else if (op.method !== "GET" && op.method !== "HEAD") {
    out.push((parts) =>
      fc.constant(withBody(parts, "unexpected-body", JSON.stringify({ unexpected: true }))),
    );
  }
  out.push((parts) =>
    fc
      .tuple(fc.string({ minLength: 1, maxLength: 10 }), fc.constantFrom(...UNICODE_STRINGS))
      .map(([k, v]) => ({ ...parts, kind: "extra-query", query: [...parts.query, [k, v]] })),
  );
  out.push((parts) =>
    fc.constantFrom(...TRAVERSAL_SEGMENTS).map((segment) => ({
      ...parts,
      kind: "traversal-suffix",
      path: { ...parts.path, __suffix: segment },
    })),
  );
  return out;
}

function targetOf(op: Operation, parts: Parts): string {
  let path = op.path.replace(/\{([^}]+)\}/g, (_, name: string) => parts.path[name] ?? "x");
  if (parts.path["__suffix"] !== undefined) path = `${path}/${parts.path["__suffix"]}`;
  return `${path}${encodeQuery(parts.query)}`;
}

function appliesTo(credential: FuzzCredential, op: Pick<Operation, "path" | "security">): boolean {
  if (credential.schemes?.some((scheme) => op.security.includes(scheme))) return true;
  if (
    credential.paths?.some((p) => (typeof p === "string" ? op.path.startsWith(p) : p.test(op.path)))
  )
    return true;
  return !credential.schemes && !credential.paths;
}

function excluded(options: FuzzOpenApiOptions, route: string): boolean {
  return (options.exclude ?? []).some((rule) =>
    typeof rule === "string" ? rule === route : rule.test(route),
  );
}

/** Every request the run will send, in a deterministic order for the seed. */
function plan(
  document: Record<string, unknown>,
  options: FuzzOpenApiOptions,
  seed: number,
): { planned: Planned[]; operations: Operation[] } {
  const resolve = refResolver(document as JsonSchema);
  const hugeLength = options.hugeLength ?? 70_000;
  const operations = operationsOf(document).filter((op) => !excluded(options, op.route));
  const planned: Planned[] = [];
  for (const op of operations) {
    const creds = (options.credentials ?? []).some((c) => appliesTo(c, op));
    const valid = validParts(op, resolve, options);
    const make = (parts: Parts, withCredentials: boolean): Planned => {
      const headers: Record<string, string> = { ...parts.headers };
      if (parts.contentType) headers["content-type"] = parts.contentType;
      return {
        method: op.method,
        target: targetOf(op, parts),
        route: op.route,
        kind: withCredentials || !creds ? parts.kind : `${parts.kind}+unauthenticated`,
        headers,
        withCredentials,
        ...(parts.body !== undefined ? { body: parts.body } : {}),
      };
    };
    const validRuns = options.validRuns ?? 6;
    const invalidRuns = options.invalidRuns ?? 14;
    for (const parts of fc.sample(valid, {
      seed: seedOf(seed, op.route, "valid"),
      numRuns: validRuns,
    }))
      planned.push(make(parts, creds));
    if (creds) {
      const [parts] = fc.sample(valid, { seed: seedOf(seed, op.route, "anon"), numRuns: 1 });
      if (parts) planned.push(make({ ...parts, kind: "valid" }, false));
    }
    const mutators = mutations(op, resolve, hugeLength);
    const invalid = fc
      .tuple(valid, fc.nat({ max: mutators.length - 1 }), fc.nat({ max: 3 }))
      .chain(([parts, index, anon]) =>
        mutators[index]!(parts).map((mutated) => ({ mutated, anon: anon === 0 })),
      );
    if (invalidRuns > 0 && mutators.length > 0) {
      for (const { mutated, anon } of fc.sample(invalid, {
        seed: seedOf(seed, op.route, "invalid"),
        numRuns: invalidRuns,
      }))
        planned.push(make(mutated, creds && !anon));
    }
  }
  // Odd methods once per path (with credentials where some apply), and CONNECT over a raw socket.
  const byPath = new Map<string, Operation>();
  for (const op of operations) if (!byPath.has(op.path)) byPath.set(op.path, op);
  for (const [path, op] of byPath) {
    const target = path.replace(/\{([^}]+)\}/g, (_, name: string) =>
      percentEncode(options.pathValues?.[name]?.[0] ?? "x"),
    );
    const declared = new Set(operations.filter((o) => o.path === path).map((o) => o.method));
    const creds = (options.credentials ?? []).some((c) => appliesTo(c, op));
    for (const method of [...ODD_METHODS, "CONNECT"]) {
      if (declared.has(method)) continue;
      planned.push({
        method,
        target,
        route: `* ${path}`,
        kind: "odd-method",
        headers: {},
        withCredentials: creds,
        ...(method === "CONNECT" ? { raw: true } : {}),
      });
    }
  }
  return { planned, operations };
}

function credentialHeaders(
  options: FuzzOpenApiOptions,
  operations: Operation[],
  request: Planned,
): Record<string, string> {
  if (!request.withCredentials) return {};
  const path = request.route.slice(request.route.indexOf(" ") + 1);
  const op = operations.find((o) => o.route === request.route) ?? {
    path,
    security: operations.find((o) => o.path === path)?.security ?? [],
  };
  const out: Record<string, string> = {};
  for (const credential of options.credentials ?? []) {
    if (!appliesTo(credential, op)) continue;
    const headers =
      typeof credential.headers === "function" ? credential.headers(request) : credential.headers;
    Object.assign(out, headers);
  }
  return out;
}

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

const MAX_BODY = 1 << 20;

async function sendRaw(base: URL, request: Planned, headers: Record<string, string>) {
  // CONNECT is refused by fetch and undici's request(): write it by hand, read the status line.
  return new Promise<Answer | undefined>((resolve) => {
    const socket = connect(Number(base.port || 80), base.hostname);
    let data = "";
    const done = (answer: Answer | undefined) => {
      socket.destroy();
      resolve(answer);
    };
    const parse = () => {
      const match = /^HTTP\/1\.[01] (\d{3})[^\r\n]*\r\n([\s\S]*?)\r\n\r\n([\s\S]*)$/.exec(data);
      if (!match) return undefined;
      const out: Record<string, string> = {};
      for (const line of match[2]!.split("\r\n")) {
        const at = line.indexOf(":");
        if (at > 0) out[line.slice(0, at).trim().toLowerCase()] = line.slice(at + 1).trim();
      }
      return { status: Number(match[1]), headers: out, body: match[3]! };
    };
    socket.setTimeout(3_000, () => done(parse()));
    socket.on("error", () => done(parse()));
    socket.on("data", (chunk) => {
      data += chunk.toString("latin1");
      const answer = parse();
      const length = Number(answer?.headers["content-length"] ?? Number.NaN);
      if (answer && (answer.body.length >= length || data.length > MAX_BODY)) done(answer);
    });
    socket.on("end", () => done(parse()));
    const lines = [`${request.method} ${request.target} HTTP/1.1`, `host: ${base.host}`];
    for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
    socket.write(`${lines.join("\r\n")}\r\n\r\n`);
  });
}

async function send(
  pool: Pool,
  base: URL,
  request: Planned,
  headers: Record<string, string>,
): Promise<Answer | undefined> {
  if (request.raw) return sendRaw(base, request, headers);
  try {
    const response = await pool.request({
      method: request.method,
      path: request.target,
      headers,
      body: request.body,
      headersTimeout: 10_000,
      bodyTimeout: 10_000,
    });
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of response.body) {
      if (size < MAX_BODY) chunks.push(chunk as Buffer);
      size += (chunk as Buffer).length;
    }
    const out: Record<string, string> = {};
    for (const [name, value] of Object.entries(response.headers)) {
      out[name] = Array.isArray(value) ? value.join(", ") : String(value ?? "");
    }
    return { status: response.statusCode, headers: out, body: Buffer.concat(chunks).toString() };
  } catch {
    return undefined;
  }
}

function judge(
  request: Planned,
  answer: Answer | undefined,
  secrets: readonly string[],
  internal: readonly string[],
): Omit<FuzzFinding, "route" | "method" | "target" | "requestKind">[] {
  if (!answer) return [{ kind: "no_response", detail: "the connection closed with no answer" }];
  const found: Omit<FuzzFinding, "route" | "method" | "target" | "requestKind">[] = [];
  const status = answer.status;
  if (status >= 500) {
    found.push({ kind: "server_error", status, detail: answer.body.slice(0, 200) });
  }
  const headerText = Object.entries(answer.headers)
    .map(([k, v]) => `${k}: ${v}`)
    .join("\n");
  const everything = `${headerText}\n${answer.body}`;
  const sent = `${request.target}\n${request.body ?? ""}`;
  for (const pattern of STACK_TRACE) {
    const match = pattern.exec(answer.body);
    if (match) found.push({ kind: "stack_trace", status, detail: match[0].slice(0, 200) });
  }
  const path = FILE_PATH.exec(answer.body);
  // An echo of what the request itself carried is not a leak.
  if (path && !sent.includes(path[0]))
    found.push({ kind: "internal_address", status, detail: path[0] });
  for (const address of internal) {
    if (address && everything.includes(address) && !sent.includes(address))
      found.push({ kind: "internal_address", status, detail: address });
  }
  for (const [index, secret] of secrets.entries()) {
    if (!secret || secret.length < 6) continue;
    if (answer.body.includes(secret))
      found.push({ kind: "secret", status, detail: `secret #${index} in the body` });
    else if (headerText.includes(secret))
      found.push({ kind: "secret", status, detail: `secret #${index} in a header` });
  }
  return found;
}

/**
 * Fuzz a live server from its own OpenAPI document: for every route, seeded valid requests
 * (path, query, header and JSON body values generated from its schemas; with `credentials`
 * where they apply) and invalid ones (wrong types, missing required, extra and `__proto__`
 * properties, huge and unicode strings, path traversal spellings, malformed bodies), plus
 * undeclared methods (TRACE, CONNECT...) on every path. Every answer must be below 500 and
 * carry no stack trace, no internal address or file path, and none of `secrets`. Runs under
 * any test runner; the same seed sends the same requests.
 * @example const report = await fuzzOpenApi({ baseUrl: t.url, secrets: [t.token] }); report.ok;
 */
export async function fuzzOpenApi(options: FuzzOpenApiOptions): Promise<FuzzReport> {
  const started = Date.now();
  const seed = options.seed ?? (Number(process.env["FUZZ_SEED"]) || 1);
  const base = new URL(options.baseUrl);
  const document =
    options.openapi ??
    ((await (await fetch(new URL(options.openapiPath ?? "/openapi.json", base))).json()) as Record<
      string,
      unknown
    >);
  const { planned, operations } = plan(document, options, seed);
  const internal = [
    ...(options.internalAddresses ?? []),
    ...(process.cwd().length > 1 ? [process.cwd()] : []),
  ];
  const coverage = new Map<string, FuzzRouteCoverage>();
  const findings: FuzzFinding[] = [];
  const deadline = started + (options.timeLimitMs ?? 20_000);
  const pool = new Pool(base.origin, { connections: options.concurrency ?? 4 });
  let next = 0;
  let sent = 0;
  let timedOut = false;
  let allowed = 0;
  const isAllowed = (kind: FuzzFindingKind, route: string) =>
    (options.allow ?? []).some(
      (rule) =>
        rule.kind === kind &&
        (typeof rule.route === "string" ? rule.route === route : rule.route.test(route)),
    );
  const worker = async () => {
    while (next < planned.length) {
      if (Date.now() > deadline) {
        timedOut = true;
        return;
      }
      const request = planned[next++]!;
      const headers = { ...request.headers, ...credentialHeaders(options, operations, request) };
      const answer = await send(pool, base, request, headers);
      sent++;
      const entry = coverage.get(request.route) ?? {
        route: request.route,
        requests: 0,
        statuses: {},
      };
      entry.requests++;
      const status = answer ? String(answer.status) : "none";
      entry.statuses[status] = (entry.statuses[status] ?? 0) + 1;
      coverage.set(request.route, entry);
      for (const finding of judge(request, answer, options.secrets ?? [], internal)) {
        if (isAllowed(finding.kind, request.route)) {
          allowed++;
          continue;
        }
        findings.push({
          ...finding,
          route: request.route,
          method: request.method,
          target: request.target.length > 200 ? `${request.target.slice(0, 200)}…` : request.target,
          requestKind: request.kind,
        });
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: options.concurrency ?? 4 }, worker));
  } finally {
    await pool.close();
  }
  const routes = [...coverage.values()].sort((a, b) => a.route.localeCompare(b.route));
  for (const op of operations) {
    if (!coverage.has(op.route)) routes.push({ route: op.route, requests: 0, statuses: {} });
  }
  return {
    ok: findings.length === 0 && !timedOut,
    seed,
    requests: sent,
    routes,
    findings,
    allowed,
    timedOut,
    durationMs: Date.now() - started,
  };
}

/** One line per finding kind and route (a run can repeat one defect hundreds of times). */
export function summarizeFuzzReport(report: FuzzReport): string {
  const lines = [
    `${report.requests} requests to ${report.routes.length} routes in ${report.durationMs} ms (seed ${report.seed}${report.allowed ? `, ${report.allowed} allowed findings` : ""}${report.timedOut ? ", TIMED OUT" : ""})`,
  ];
  for (const route of report.routes) {
    const statuses = Object.entries(route.statuses)
      .map(([status, n]) => `${status}×${n}`)
      .join(" ");
    lines.push(`  ${route.route}: ${route.requests} (${statuses})`);
  }
  const seen = new Map<string, { finding: FuzzFinding; count: number }>();
  for (const finding of report.findings) {
    const key = `${finding.kind} ${finding.route} ${finding.status ?? ""}`;
    const entry = seen.get(key);
    if (entry) entry.count++;
    else seen.set(key, { finding, count: 1 });
  }
  for (const { finding, count } of seen.values()) {
    lines.push(
      `  FINDING ${finding.kind} on ${finding.route} ×${count}: ${finding.method} ${finding.target} (${finding.requestKind}) -> ${finding.status ?? "no answer"}: ${finding.detail.slice(0, 160)}`,
    );
  }
  return lines.join("\n");
}

/**
 * What {@link fuzzOpenApi} needs to fuzz a challenge started by `startTestChallenge`: its URL,
 * its token for internal and bridge routes (with a verified miner identity), the test miner's
 * signature on signed routes, and its token and the miner's mnemonic as the secrets.
 * @example const report = await fuzzOpenApi(challengeFuzzOptions(t, { exclude: ["GET /v1/boom"] }));
 */
export function challengeFuzzOptions(
  t: TestChallenge<unknown>,
  options: Omit<FuzzOpenApiOptions, "baseUrl"> = {},
): FuzzOpenApiOptions {
  const url = new URL(t.url);
  return {
    ...options,
    baseUrl: t.url,
    credentials: [
      { schemes: ["challengeToken"], headers: () => t.bridgeHeaders(t.miner.hotkey) },
      {
        schemes: ["minerSignature"],
        headers: (request) => t.sign(request.method, request.target, { body: request.body }),
      },
      ...(options.credentials ?? []),
    ],
    secrets: [t.token, t.miner.mnemonic, ...(options.secrets ?? [])],
    // The challenge's own address is public to its caller; its database's is not.
    internalAddresses: [...(options.internalAddresses ?? [])].filter((a) => a !== url.host),
  };
}
