import {
  ChallengeWeightsResponse,
  injectTraceHeaders,
  type TraceContext,
  validateValue,
} from "@platform/core";
import { type Dispatcher, request } from "undici";

/** The challenge route the master polls for weights (spec: /internal/v1 prefix). */
export const GET_WEIGHTS_PATH = "internal/v1/get_weights";

/** The slug header the spec names, and the one the anchor's challenges read. */
export const SLUG_HEADERS = ["x-platform-challenge-slug", "x-core-challenge-slug"] as const;

/** Largest get_weights reply accepted by default: ~100,000 hotkeys with room to spare. */
export const DEFAULT_MAX_REPLY_BYTES = 8 * 1024 * 1024;

/** Options of {@link fetchChallengeWeights}. */
export interface FetchChallengeWeightsOptions {
  slug: string;
  /** The challenge's internal base URL; a path prefix in it is kept. */
  baseUrl: string;
  /** The clear challenge token (bearer). Never logged, never in an error. */
  token: string;
  /** Budget of one attempt, from connect to the last body byte (ms). */
  timeoutMs: number;
  /** Extra attempts after a retryable failure. */
  retries: number;
  /** First backoff (ms); doubles per retry, with jitter, capped at 5 s. Default 250. */
  backoffMs?: number;
  maxBytes?: number;
  dispatcher?: Dispatcher;
  /** Aborts every attempt and backoff (the master is closing). */
  signal?: AbortSignal;
  userAgent?: string;
  /** The collection's trace (its span's context): each request continues it. */
  trace?: TraceContext;
}

/** The outcome of polling one challenge. Errors are short, public-safe reasons. */
export type ChallengeWeightsFetch =
  | { ok: true; reply: ChallengeWeightsResponse; attempts: number; latency_ms: number }
  | { ok: false; error: string; attempts: number; latency_ms: number | null };

class AttemptFailure extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
  ) {
    super(message);
  }
}

function shorten(text: string, max = 160): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** Where get_weights lives under a base URL, keeping any path prefix (`http://h/prefix/`). */
export function getWeightsUrl(baseUrl: string): URL {
  const base = new URL(baseUrl);
  if (!base.pathname.endsWith("/")) base.pathname += "/";
  base.search = "";
  base.hash = "";
  return new URL(GET_WEIGHTS_PATH, base);
}

function transportReason(error: unknown): string {
  const seen = new Set<unknown>();
  let current: unknown = error;
  // undici wraps socket errors; the errno code (ECONNREFUSED...) says most without naming hosts.
  while (current && typeof current === "object" && !seen.has(current)) {
    seen.add(current);
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string" && /^E[A-Z]+$/.test(code)) return `unreachable (${code})`;
    current = (current as { cause?: unknown }).cause;
  }
  return "unreachable (transport error)";
}

async function readCapped(
  body: Dispatcher.ResponseData["body"],
  maxBytes: number,
): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += (chunk as Buffer).byteLength;
    if (size > maxBytes) {
      body.destroy();
      throw new AttemptFailure(`reply larger than ${maxBytes} bytes`, false);
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

async function attempt(
  url: URL,
  options: FetchChallengeWeightsOptions,
): Promise<ChallengeWeightsResponse> {
  const timeout = AbortSignal.timeout(options.timeoutMs);
  const signal = options.signal ? AbortSignal.any([timeout, options.signal]) : timeout;
  const headers: Record<string, string> = {
    accept: "application/json",
    authorization: `Bearer ${options.token}`,
    [SLUG_HEADERS[0]]: options.slug,
    [SLUG_HEADERS[1]]: options.slug,
    "user-agent": options.userAgent ?? "platform-master",
  };
  // Tracing on: the challenge's get_weights continues the collection's trace.
  injectTraceHeaders(headers, options.trace);
  try {
    const response = await request(url, {
      method: "GET",
      headers,
      signal,
      ...(options.dispatcher ? { dispatcher: options.dispatcher } : {}),
    });
    const status = response.statusCode;
    if (status !== 200) {
      await response.body.dump().catch(() => {});
      // 408, 429 and 5xx are worth another try; anything else will answer the same again.
      throw new AttemptFailure(`HTTP ${status}`, status === 408 || status === 429 || status >= 500);
    }
    const maxBytes = options.maxBytes ?? DEFAULT_MAX_REPLY_BYTES;
    const declared = Number(response.headers["content-length"]);
    if (Number.isFinite(declared) && declared > maxBytes) {
      response.body.destroy();
      throw new AttemptFailure(`reply larger than ${maxBytes} bytes`, false);
    }
    const bytes = await readCapped(response.body, maxBytes);
    let parsed: unknown;
    try {
      parsed = JSON.parse(bytes.toString("utf8"));
    } catch {
      throw new AttemptFailure("invalid JSON in reply", false);
    }
    const checked = validateValue<ChallengeWeightsResponse>(
      ChallengeWeightsResponse,
      parsed,
      "body",
    );
    if (!checked.ok) {
      const first = checked.issues[0];
      const where = first && first.loc.length > 1 ? first.loc.slice(1).join(".") : "(root)";
      throw new AttemptFailure(
        shorten(`invalid reply at ${where}: ${first?.msg ?? "not a ChallengeWeightsResponse"}`),
        false,
      );
    }
    const reply = checked.value;
    if (reply.challenge_slug !== options.slug) {
      throw new AttemptFailure(
        shorten(`slug mismatch: reply is for "${reply.challenge_slug}"`),
        false,
      );
    }
    return reply;
  } catch (error) {
    if (error instanceof AttemptFailure) throw error;
    if (options.signal?.aborted) throw new AttemptFailure("collection cancelled", false);
    if (timeout.aborted) throw new AttemptFailure(`timed out after ${options.timeoutMs} ms`, true);
    throw new AttemptFailure(transportReason(error), true);
  }
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}

/**
 * Poll one challenge's `GET {base}/internal/v1/get_weights` with its bearer token and slug
 * headers, retrying transport failures, timeouts, 408, 429 and 5xx with exponential backoff.
 * A reply that is not valid JSON, does not match `ChallengeWeightsResponse`, or names another
 * slug is a failure (not retried: it would say the same again). Never throws.
 */
export async function fetchChallengeWeights(
  options: FetchChallengeWeightsOptions,
): Promise<ChallengeWeightsFetch> {
  let url: URL;
  try {
    url = getWeightsUrl(options.baseUrl);
  } catch {
    return {
      ok: false,
      error: "internal_base_url is not a valid URL",
      attempts: 0,
      latency_ms: null,
    };
  }
  const backoff = options.backoffMs ?? 250;
  let attempts = 0;
  for (;;) {
    attempts++;
    const started = performance.now();
    try {
      const reply = await attempt(url, options);
      return { ok: true, reply, attempts, latency_ms: Math.round(performance.now() - started) };
    } catch (error) {
      const failure = error as AttemptFailure;
      const latency = Math.round(performance.now() - started);
      if (!failure.retryable || attempts > options.retries || options.signal?.aborted) {
        return { ok: false, error: failure.message, attempts, latency_ms: latency };
      }
      const delay = Math.min(5_000, backoff * 2 ** (attempts - 1));
      await sleep(delay / 2 + Math.random() * (delay / 2), options.signal);
    }
  }
}
