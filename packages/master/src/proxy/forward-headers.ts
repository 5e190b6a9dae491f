/**
 * The request headers the forwarding rules read: a web `Headers` (the kit's routes) or a view
 * of a node request's raw headers with the same semantics (the native passthrough).
 */
export interface RequestHeaderReader {
  get(name: string): string | null;
  /** Lower-cased names in sorted order, repeated headers joined, as `Headers.forEach`. */
  forEach(callback: (value: string, name: string) => void): void;
}

/** What the master adds to every request it forwards to a challenge. */
export interface ForwardIdentity {
  slug: string;
  /** The request id of this request (reused from the client when plain, else minted). */
  requestId: string;
  /** The client's address as the master's socket saw it. */
  remoteAddress?: string | undefined;
  /** The host the client addressed (its Host header), for X-Forwarded-Host. */
  host?: string | undefined;
}

// RFC 9110 7.6.1 plus the legacy names still seen in the wild.
const HOP_BY_HOP: ReadonlySet<string> = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "te",
  "trailer",
  "trailers",
  "transfer-encoding",
  "upgrade",
]);

// Credentials meant for the master (never for a challenge), and what the master sets itself.
// Authorization is not among them: the public listener takes no master credential (the admin
// API has its own listener), and challenges authenticate their own callers with it (the
// agent-eval interface's review and run tokens). The one Authorization the master does hold
// back is its admin token (see passthroughRequestHeaders).
const MASTER_ONLY: ReadonlySet<string> = new Set([
  "x-admin-token",
  "cookie",
  "host",
  "expect",
  "forwarded",
  "x-real-ip",
  "x-request-id",
  "content-length",
  // The bridge's filename header is the master's to set from the signed request, never a client's.
  "x-submission-filename",
]);

// Identity headers a challenge may trust because only the master sets them: whatever the
// family or spelling (x-platform-verified-hotkey, x-core-request-hash, x-verified-user...).
const PLATFORM_PREFIXES = ["x-platform-", "x-core-", "x-forwarded-", "proxy-"] as const;
const VERIFIED = /(?:^|-)verified(?:-|$)/;

/** Header names the Connection header lists: hop-by-hop for this one message. */
function connectionOptions(value: string | null | undefined): Set<string> {
  const names = new Set<string>();
  for (const token of (value ?? "").split(",")) {
    const name = token.trim().toLowerCase();
    if (name) names.add(name);
  }
  return names;
}

/** True for a hop-by-hop header name (RFC 9110 7.6.1), given the message's Connection options. */
export function isHopByHop(name: string, connection: ReadonlySet<string> = new Set()): boolean {
  const lower = name.toLowerCase();
  return HOP_BY_HOP.has(lower) || lower.startsWith("proxy-") || connection.has(lower);
}

/**
 * True for a request header a client must not get through to a challenge: hop-by-hop headers,
 * the master's own credentials (X-Admin-Token, Cookie), and every header a
 * challenge could read as the platform speaking (X-Platform-*, X-Core-*, *-Verified-*,
 * Forwarded, X-Forwarded-*, X-Real-Ip, X-Request-Id, X-Submission-Filename), which the master
 * sets itself, in any spelling with underscores for hyphens.
 */
export function isStrippedRequestHeader(
  name: string,
  connection: ReadonlySet<string> = new Set(),
): boolean {
  // Many frameworks (CGI, WSGI, nginx's underscores_in_headers) read `x_platform_verified_hotkey`
  // as `x-platform-verified-hotkey`: judge every underscore spelling as its hyphen one.
  const lower = name.toLowerCase().replaceAll("_", "-");
  if (isHopByHop(lower, connection) || MASTER_ONLY.has(lower) || VERIFIED.test(lower)) return true;
  return PLATFORM_PREFIXES.some((prefix) => lower.startsWith(prefix));
}

function forwardedFor(
  incoming: string | null,
  remoteAddress: string | undefined,
): string | undefined {
  // Appended like nginx's $proxy_add_x_forwarded_for: the last entry is the one the master saw;
  // anything before it is what the client (or a proxy in front of the master) claimed.
  const chain = [incoming?.trim(), remoteAddress].filter((part): part is string => Boolean(part));
  return chain.length ? chain.join(", ") : undefined;
}

/**
 * The headers the master sets on every forwarded request (proxy marker, slug, X-Forwarded-*,
 * the trace context is added by the caller).
 */
export function platformHeaders(
  incoming: RequestHeaderReader,
  identity: ForwardIdentity,
): Record<string, string> {
  const out: Record<string, string> = {
    "x-platform-proxy": "true",
    "x-platform-challenge-slug": identity.slug,
    "x-forwarded-prefix": `/challenges/${identity.slug}`,
    "x-request-id": identity.requestId,
  };
  const proto = incoming.get("x-forwarded-proto")?.trim().toLowerCase();
  out["x-forwarded-proto"] = proto === "https" || proto === "http" ? proto : "http";
  const host = identity.host ?? incoming.get("host");
  if (host) out["x-forwarded-host"] = host;
  const chain = forwardedFor(incoming.get("x-forwarded-for"), identity.remoteAddress);
  if (chain) out["x-forwarded-for"] = chain;
  // The request's traceparent is the caller's to add (ProxyObservation.inject): the master's
  // span when it traces, else the client's passes as any other header.
  return out;
}

/** Whether an Authorization value carries one of the master's own credentials. */
export type MasterCredentialCheck = (authorization: string) => boolean;

/**
 * The headers of a passthrough request: the client's, less everything
 * {@link isStrippedRequestHeader} refuses, plus {@link platformHeaders}. Miner signature headers
 * (X-Hotkey, X-Signature, X-Nonce, X-Timestamp) pass, so a challenge can verify them itself, and
 * so does Authorization (a challenge's own bearer tokens), unless `isMasterCredential` says it
 * carries the master's admin token: a misdirected admin client never hands it to a challenge.
 * `contentLength` is the client's Content-Length when the body is forwarded as it came.
 */
export function passthroughRequestHeaders(
  incoming: RequestHeaderReader,
  identity: ForwardIdentity,
  contentLength?: string | null,
  isMasterCredential?: MasterCredentialCheck,
): Record<string, string> {
  const connection = connectionOptions(incoming.get("connection"));
  const out: Record<string, string> = {};
  incoming.forEach((value, name) => {
    if (isStrippedRequestHeader(name, connection)) return;
    if (name.toLowerCase() === "authorization" && isMasterCredential?.(value)) return;
    out[name] = value;
  });
  if (contentLength) out["content-length"] = contentLength;
  return Object.assign(out, platformHeaders(incoming, identity));
}

// A challenge's response must not set cookies on the master's origin (docs/proxy-contract.md):
// cookies ignore ports, so one set here would also reach the admin listener on the same host.
const RESPONSE_STRIPPED: ReadonlySet<string> = new Set(["set-cookie", "set-cookie2"]);

/**
 * Visit each of a challenge's response headers the client gets, as (name, value): every one but
 * hop-by-hop headers and Set-Cookie (a challenge never sets cookies on the master's origin).
 * Repeated headers are visited once per value.
 */
export function forEachForwardedResponseHeader(
  headers: Record<string, string | string[] | undefined>,
  visit: (name: string, value: string) => void,
): void {
  const connectionValue = headers.connection;
  const connection = connectionOptions(
    Array.isArray(connectionValue) ? connectionValue.join(",") : connectionValue,
  );
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || isHopByHop(name, connection)) continue;
    if (RESPONSE_STRIPPED.has(name.toLowerCase())) continue;
    if (Array.isArray(value)) for (const item of value) visit(name, item);
    else visit(name, value);
  }
}

/** A challenge's response headers as the client gets them ({@link forEachForwardedResponseHeader}). */
export function upstreamResponseHeaders(
  headers: Record<string, string | string[] | undefined>,
): Headers {
  const out = new Headers();
  forEachForwardedResponseHeader(headers, (name, value) => out.append(name, value));
  return out;
}

// HTTP whitespace `Headers` trims from both ends of a value.
const EDGE_WHITESPACE = /^[\t\n\r ]+|[\t\n\r ]+$/g;

/** A header value as a web `Headers` stores it (HTTP whitespace trimmed at both ends). */
export function fetchHeaderValue(value: string): string {
  return value.replace(EDGE_WHITESPACE, "");
}

/**
 * The same headers as {@link upstreamResponseHeaders}, as a plain object for node's `writeHead`
 * and spelled as that `Headers` would give them to the node adapter: lower-case names, values
 * trimmed, repeated headers joined with ", ".
 */
export function upstreamResponseHeaderObject(
  headers: Record<string, string | string[] | undefined>,
): Record<string, string> {
  // No prototype: a header may be called `__proto__` (a valid token), as it may in `Headers`.
  const out: Record<string, string> = Object.create(null);
  forEachForwardedResponseHeader(headers, (name, raw) => {
    const lower = name.toLowerCase();
    const value = fetchHeaderValue(raw);
    const previous = out[lower];
    out[lower] = previous === undefined ? value : `${previous}, ${value}`;
  });
  return out;
}

/** The identity the master verified for a signed upload, and the bearer it presents. */
export interface BridgeCredentials {
  /** The challenge token (clear) the master presents as `Authorization: Bearer`. */
  token: string;
  hotkey: string;
  nonce: string;
  /** sha256 hex of the canonical signed message. */
  requestHash: string;
  filename?: string | undefined;
}

// Client headers a bridge request keeps: content negotiation, and the client's W3C trace context
// (replaced by the master's own when it traces). Everything else, the miner signature headers
// included, stays at the master: the bridge trusts the verified ones.
const BRIDGE_KEPT = [
  "content-type",
  "accept",
  "accept-encoding",
  "accept-language",
  "user-agent",
  "traceparent",
  "tracestate",
] as const;

/**
 * The headers of a verified upload forwarded to `/internal/v1/bridge/submissions`: the challenge
 * bearer, the slug in both families, the verified identity in both families
 * (X-Platform-Verified-Hotkey; X-Core-Verified-Hotkey, X-Core-Verified-Nonce,
 * X-Core-Request-Hash), X-Submission-Filename when given, and {@link platformHeaders}.
 */
export function bridgeRequestHeaders(
  incoming: RequestHeaderReader,
  identity: ForwardIdentity,
  credentials: BridgeCredentials,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of BRIDGE_KEPT) {
    const value = incoming.get(name);
    if (value !== null) out[name] = value;
  }
  Object.assign(out, platformHeaders(incoming, identity), {
    authorization: `Bearer ${credentials.token}`,
    "x-core-challenge-slug": identity.slug,
    "x-platform-verified-hotkey": credentials.hotkey,
    "x-core-verified-hotkey": credentials.hotkey,
    "x-core-verified-nonce": credentials.nonce,
    "x-core-request-hash": credentials.requestHash,
  });
  if (credentials.filename !== undefined) out["x-submission-filename"] = credentials.filename;
  return out;
}
