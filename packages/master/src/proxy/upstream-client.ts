import { Readable } from "node:stream";
import { HttpError, type Logger } from "@platform/core";
import { type Dispatcher, Pool } from "undici";
import { upstreamResponseHeaders } from "./forward-headers.js";

/** One request to a challenge. */
export interface UpstreamRequest {
  /** The challenge (for error messages and logs: never its address). */
  slug: string;
  /** The challenge's internal base URL; its path, if any, prefixes `target`. */
  base: URL;
  /** Encoded path below the base, with the query: `/v1/items?x=1`. */
  target: string;
  method: string;
  headers: Record<string, string>;
  /** A stream is forwarded as it arrives; bytes are sent with their length. */
  body?: Readable | Uint8Array | null;
  /** Aborts the upstream request (the client went away). */
  signal?: AbortSignal;
}

/** Options of {@link UpstreamClient}. */
export interface UpstreamClientOptions {
  /**
   * How long a challenge may take to start answering, and how long a response body may stay
   * silent between two chunks (so an SSE stream that keeps sending is never cut). Also the
   * connect timeout.
   */
  timeoutMs: number;
  log: Logger;
}

const TIMEOUT_CODES: ReadonlySet<string> = new Set([
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
  "UND_ERR_CONNECT_TIMEOUT",
  "ETIMEDOUT",
]);
// Statuses whose response has no body by definition (fetch's "null body status").
const NULL_BODY_STATUS: ReadonlySet<number> = new Set([204, 205, 304]);
// RFC 9112 reason-phrase; anything else would make the Response constructor throw.
const REASON_PHRASE = /^[\t\x20-\x7e\x80-\xff]*$/;

/** True when a challenge's answer has no body to forward: HEAD, or 204, 205 and 304. */
export function hasNoBody(method: string, status: number): boolean {
  return method === "HEAD" || NULL_BODY_STATUS.has(status);
}

/** A challenge's reason phrase as forwarded: kept when valid (RFC 9112), else empty. */
export function forwardedReason(statusText: string): string {
  return REASON_PHRASE.test(statusText) ? statusText : "";
}

/** 502 for a status no client may be given (outside 200-599: 1xx never ends an exchange). */
export function invalidUpstreamStatus(slug: string, status: number): HttpError {
  return upstreamUnavailable(slug, `answered with an invalid status (${status})`);
}

/** 502 `upstream_unavailable`: the challenge is down, refused or broke the connection. */
export function upstreamUnavailable(
  slug: string,
  detail = "is unreachable",
  cause?: unknown,
): HttpError {
  return new HttpError(502, "upstream_unavailable", `Challenge "${slug}" ${detail}`, { cause });
}

/** The base URL of a challenge, or null when it is not an absolute http(s) URL. */
export function parseBaseUrl(value: string | null): URL | null {
  if (!value) return null;
  try {
    const url = new URL(value);
    return url.protocol === "http:" || url.protocol === "https:" ? url : null;
  } catch {
    return null;
  }
}

// The path sent to the challenge: the base URL's own path (if any) prefixes the target.
function upstreamPath(request: UpstreamRequest): string {
  return `${request.base.pathname.replace(/\/+$/, "")}${request.target}`;
}

/**
 * Outbound HTTP to challenges over undici: one keep-alive pool per origin, reused by every
 * request to it. Redirects are never followed and bodies stream both ways. Transport failures
 * become 502s whose message names the challenge, never its internal address.
 */
export class UpstreamClient {
  private readonly pools = new Map<string, Pool>();

  constructor(private readonly options: UpstreamClientOptions) {}

  /** The pool of `origin` (created on first use). */
  pool(origin: string): Pool {
    let pool = this.pools.get(origin);
    if (!pool) {
      const timeout = this.options.timeoutMs;
      // No connection cap: SSE streams hold a connection each for minutes, and a capped pool
      // would queue every other request behind them with no timeout at all.
      pool = new Pool(origin, {
        headersTimeout: timeout,
        bodyTimeout: timeout,
        connectTimeout: timeout,
      });
      this.pools.set(origin, pool);
    }
    return pool;
  }

  /** Send one request; resolves once the response starts, its body still streaming. */
  async send(request: UpstreamRequest): Promise<Response> {
    let data: Awaited<ReturnType<Pool["request"]>>;
    try {
      data = await this.pool(request.base.origin).request({
        path: upstreamPath(request),
        method: request.method as "GET",
        headers: request.headers,
        body: request.body ?? null,
        signal: request.signal ?? null,
      });
    } catch (error) {
      throw this.failure(request.slug, error);
    }
    const { statusCode: status, body } = data;
    if (status < 200 || status > 599) {
      // Destroying undici's body emits an AbortError on it: without a listener that error is
      // uncaught and takes the process down.
      body.on("error", () => {}).destroy();
      throw invalidUpstreamStatus(request.slug, status);
    }
    const headers = upstreamResponseHeaders(data.headers);
    const statusText = forwardedReason(data.statusText);
    if (hasNoBody(request.method, status)) {
      await body.dump().catch(() => {});
      return new Response(null, { status, statusText, headers });
    }
    const stream = Readable.toWeb(body) as unknown as ReadableStream<Uint8Array>;
    return new Response(stream, { status, statusText, headers });
  }

  /**
   * Send one request with a raw undici dispatch handler (the native passthrough's response
   * writer): no Readable, no web stream. The same pool, so the same timeouts; the handler gets
   * transport failures as they are and turns them into answers with {@link failure}.
   * `request.signal` is not used here: the handler aborts through its controller.
   */
  dispatch(request: UpstreamRequest, handler: Dispatcher.DispatchHandler): void {
    this.pool(request.base.origin).dispatch(
      {
        path: upstreamPath(request),
        method: request.method as "GET",
        headers: request.headers,
        body: request.body ?? null,
      },
      handler,
    );
  }

  /**
   * Requests to `origin` under way on this master (sent or queued, their response bodies still
   * streaming): an update waits for them to end before it stops the old container.
   */
  inflight(origin: string): number {
    const stats = this.pools.get(origin)?.stats;
    return stats ? stats.size : 0;
  }

  /** Drop every pooled connection. */
  async close(): Promise<void> {
    const pools = [...this.pools.values()];
    this.pools.clear();
    await Promise.all(pools.map((pool) => pool.destroy().catch(() => {})));
  }

  /**
   * The answer to a transport failure (refused, reset, timed out): a 502 naming the challenge,
   * never its address; logged, at debug level when the client itself went away.
   */
  failure(slug: string, error: unknown): HttpError {
    const code = (error as { code?: unknown } | null)?.code;
    // A client that went away aborts its upstream request: expected, not worth a warning.
    const aborted = code === "UND_ERR_ABORTED" || (error as Error | null)?.name === "AbortError";
    this.options.log[aborted ? "debug" : "warn"]("challenge request failed", {
      slug,
      error_code: code,
      error,
    });
    if (typeof code === "string" && TIMEOUT_CODES.has(code)) {
      const seconds = Math.round(this.options.timeoutMs / 100) / 10;
      return new HttpError(
        502,
        "upstream_timeout",
        `Challenge "${slug}" did not answer within ${seconds} s`,
        {
          cause: error,
        },
      );
    }
    return upstreamUnavailable(slug, "is unreachable", error);
  }
}
