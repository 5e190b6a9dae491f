/**
 * A client for a challenge's workers and tools: one base URL, one credential (a bearer token, or
 * an sr25519 hotkey that signs every request as docs/protocol/signing.md says), JSON in and out,
 * and `deliver`: post these exact bytes until a 2xx, a definitive refusal or a deadline. Workers
 * report results whose bytes are bound by an attestation, so a retry must resend the same bytes,
 * and a verifier that is briefly away (503 + Retry-After) must not cost the worker its result.
 */
import { initCrypto, type Sr25519Keypair, signRequest } from "@platform/core";
import {
  type BackoffOptions,
  backoffDelayMs,
  isRetryableStatus,
  retryAfterMs,
} from "./retry-policy.js";
import { WorkerClientError } from "./worker-client-error.js";

/** Who the client is: a bearer token, or a hotkey that signs each request (fresh nonce each). */
export type ClientAuth =
  | { bearer: string }
  | {
      signer: Sr25519Keypair;
      /** The challenge the requests are for (signed into each); omit for the master's routes. */
      slug?: string;
    };

/** Where and as whom a worker client talks. */
export interface WorkerClientOptions {
  /** e.g. `http://challenge:8080/evaluation/v1/runs/42`; request paths are appended to it. */
  baseUrl: string;
  auth?: ClientAuth;
  /** Headers sent with every request (e.g. `x-core-challenge-slug`). */
  headers?: Record<string, string>;
  /** Per attempt, the answer's body included (default 30 s). */
  timeoutMs?: number;
  /** Answers larger than this are not read (default 64 MiB). */
  maxResponseBytes?: number;
}

/** One request's body and extras. */
export interface SendOptions {
  /** A value sent as JSON (`content-type: application/json`). */
  json?: unknown;
  /** Exact bytes (a string is sent as its UTF-8 bytes); wins over `json`. */
  body?: string | Uint8Array;
  /** The body's content type (default `application/json`). */
  contentType?: string;
  headers?: Record<string, string>;
  /** This request's own per-attempt timeout. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** An HTTP answer, whatever its status. */
export interface ClientAnswer<T = unknown> {
  status: number;
  /** A 2xx. */
  ok: boolean;
  headers: Headers;
  bytes: Buffer;
  /** The body parsed as JSON when the answer says it is JSON, else null. */
  body: T | null;
  /** The wait the answer's Retry-After asks for, in ms, or null. */
  retryAfterMs: number | null;
  /** A refusal's stable code (the error body's `code`), or null. */
  code: string | null;
  /** A refusal's message (the error body's `detail`, or its text), or null on a 2xx. */
  detail: string | null;
}

/** How long `deliver` keeps trying, and what it says between attempts. */
export interface DeliverOptions extends Omit<SendOptions, "json" | "body">, BackoffOptions {
  /** How long to keep trying from now (default 2 minutes); no attempt runs past it. */
  budgetMs?: number;
  /** Called before each wait: the attempt that failed, why, and how long until the next one. */
  onRetry?: (retry: { attempt: number; waitMs: number; reason: string }) => void;
}

/** A worker client (see `createWorkerClient`). */
export interface WorkerClient {
  readonly baseUrl: string;
  /** One attempt. Resolves to the answer whatever its status; throws only when none came. */
  send<T = unknown>(method: string, path: string, options?: SendOptions): Promise<ClientAnswer<T>>;
  /** One attempt whose 2xx JSON body is the result; a refusal throws a `WorkerClientError`. */
  sendJson<T = unknown>(method: string, path: string, options?: SendOptions): Promise<T>;
  /**
   * Sends exactly `body` until a 2xx (returned), a definitive refusal or the budget's end
   * (thrown as a `WorkerClientError`). Retries on no answer, 408, 425, 429 and 5xx; waits what
   * Retry-After asks (seconds or a date), else backs off exponentially with jitter. A wait that
   * would end past the budget ends it at once. Signed requests get a fresh nonce per attempt
   * (a nonce is single-use); the body bytes never change.
   */
  deliver<T = unknown>(
    method: string,
    path: string,
    body: string | Uint8Array,
    options?: DeliverOptions,
  ): Promise<ClientAnswer<T>>;
}

const DEFAULT_TIMEOUT_MS = 30_000;
const DEFAULT_BUDGET_MS = 120_000;
const DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024 * 1024;

/**
 * A client of the routes under `baseUrl`.
 * @example
 * const run = createWorkerClient({ baseUrl: `${url}/evaluation/v1/runs/${id}`, auth: { bearer: token } });
 * const receipt = await run.deliver("POST", "/result", canonicalBytes, { budgetMs: 120_000 });
 */
export function createWorkerClient(options: WorkerClientOptions): WorkerClient {
  const baseUrl = options.baseUrl.replace(/\/+$/, "");
  const auth = options.auth;
  const secret = auth && "bearer" in auth ? auth.bearer : null;
  const redact = (text: string) => (secret ? text.replaceAll(secret, "[redacted]") : text);
  const maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;

  async function once<T>(
    method: string,
    path: string,
    body: Uint8Array<ArrayBuffer> | undefined,
    init: SendOptions,
  ): Promise<ClientAnswer<T>> {
    if (path !== "" && !path.startsWith("/")) {
      throw new TypeError(`a worker client's path starts with "/": ${JSON.stringify(path)}`);
    }
    const url = `${baseUrl}${path}`;
    const what = `${method} ${path || "/"}`;
    const headers: Record<string, string> = {
      accept: "application/json",
      ...options.headers,
      ...(body === undefined ? {} : { "content-type": init.contentType ?? "application/json" }),
      ...init.headers,
    };
    if (auth && "bearer" in auth) headers.authorization = `Bearer ${auth.bearer}`;
    if (auth && "signer" in auth) {
      await initCrypto();
      // Signed per attempt: the nonce is single-use, so a retry with the last one is a replay.
      Object.assign(headers, signRequest(auth.signer, { method, url, body, slug: auth.slug }));
    }
    const timeoutMs = init.timeoutMs ?? options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = init.signal ? AbortSignal.any([timeout, init.signal]) : timeout;
    let response: Response;
    let bytes: Buffer;
    try {
      response = await fetch(url, {
        method,
        headers,
        ...(body === undefined ? {} : { body }),
        signal,
        // A worker talks to the address it was given; a redirect is an answer, not a hop.
        redirect: "manual",
      });
      bytes = await readCapped(response, maxResponseBytes);
    } catch (error) {
      if (error instanceof WorkerClientError) {
        throw new WorkerClientError(`${what}: ${error.message}`, error.kind);
      }
      if (init.signal?.aborted) {
        throw new WorkerClientError(`${what}: aborted`, "aborted", null, null, null, {
          cause: error,
        });
      }
      if (timeout.aborted) {
        throw new WorkerClientError(
          `${what}: no answer within ${timeoutMs / 1000} s`,
          "timeout",
          null,
          null,
          null,
          { cause: error },
        );
      }
      throw new WorkerClientError(
        `${what}: no answer (${redact(describe(error))})`,
        "no_answer",
        null,
        null,
        null,
        { cause: error },
      );
    }
    const parsed = /\bjson\b/i.test(response.headers.get("content-type") ?? "")
      ? parseJson(bytes)
      : null;
    const refusal = response.ok ? null : refusalOf(parsed, bytes, redact);
    return {
      status: response.status,
      ok: response.ok,
      headers: response.headers,
      bytes,
      body: parsed as T | null,
      retryAfterMs: retryAfterMs(response.headers.get("retry-after")),
      code: refusal?.code ?? null,
      detail: refusal?.detail ?? null,
    };
  }

  function bodyOf(init: SendOptions): Uint8Array<ArrayBuffer> | undefined {
    if (init.body !== undefined) return toBytes(init.body);
    return init.json === undefined ? undefined : toBytes(JSON.stringify(init.json));
  }

  const refused = (what: string, answer: ClientAnswer) =>
    new WorkerClientError(
      `${what} answered ${answer.status}${answer.code ? ` ${answer.code}` : ""}${answer.detail ? `: ${answer.detail}` : ""}`,
      "refused",
      answer.status,
      answer.code,
      answer.detail,
    );

  return {
    baseUrl,
    send: (method, path, init = {}) => once(method, path, bodyOf(init), init),
    async sendJson<T>(method: string, path: string, init: SendOptions = {}) {
      const answer = await once<T>(method, path, bodyOf(init), init);
      if (!answer.ok) throw refused(`${method} ${path || "/"}`, answer);
      return answer.body as T;
    },
    async deliver<T>(
      method: string,
      path: string,
      body: string | Uint8Array,
      init: DeliverOptions = {},
    ) {
      const bytes = toBytes(body);
      const what = `${method} ${path || "/"}`;
      const budgetMs = init.budgetMs ?? DEFAULT_BUDGET_MS;
      const deadline = Date.now() + budgetMs;
      const perAttemptMs = init.timeoutMs ?? options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
      let last = "no attempt made";
      let lastStatus: number | null = null;
      for (let attempt = 1; ; attempt += 1) {
        const remaining = deadline - Date.now();
        if (remaining <= 0) break;
        let answer: ClientAnswer<T> | null = null;
        const attemptMs = Math.min(perAttemptMs, remaining);
        try {
          answer = await once<T>(method, path, bytes, { ...init, timeoutMs: attemptMs });
        } catch (error) {
          const kind = (error as WorkerClientError).kind;
          if (kind !== "no_answer" && kind !== "timeout") throw error;
          // An attempt the budget cut short (before its own timeout) says nothing new about the
          // server: the last answer it gave stays the one the deadline error names.
          const cutByBudget = kind === "timeout" && attemptMs < perAttemptMs;
          if (!(cutByBudget && lastStatus !== null)) {
            last = (error as Error).message;
            lastStatus = null;
          }
        }
        if (answer?.ok) return answer;
        if (answer) {
          if (!isRetryableStatus(answer.status)) throw refused(what, answer);
          last = refused(what, answer).message;
          lastStatus = answer.status;
        }
        const waitMs = answer?.retryAfterMs ?? backoffDelayMs(attempt, init);
        if (Date.now() + waitMs >= deadline) break;
        init.onRetry?.({ attempt, waitMs, reason: last });
        if (!(await sleep(waitMs, init.signal))) {
          throw new WorkerClientError(`${what}: aborted`, "aborted", lastStatus);
        }
      }
      throw new WorkerClientError(
        `${what}: no 2xx within ${Math.round(budgetMs / 1000)} s (last: ${last})`,
        "deadline",
        lastStatus,
      );
    },
  };
}

/** The bytes to send: a copy, so a caller reusing its buffer cannot change a retry's body. */
function toBytes(body: string | Uint8Array): Uint8Array<ArrayBuffer> {
  return typeof body === "string" ? new TextEncoder().encode(body) : new Uint8Array(body);
}

function parseJson(bytes: Buffer): unknown {
  try {
    return JSON.parse(bytes.toString("utf8"));
  } catch {
    return null;
  }
}

/** The stable code and the message of an error body: core's `{detail, code}`, or its text. */
function refusalOf(
  parsed: unknown,
  bytes: Buffer,
  redact: (text: string) => string,
): { code: string | null; detail: string | null } {
  const body = (parsed ?? {}) as {
    code?: unknown;
    detail?: unknown;
    message?: unknown;
    error?: unknown;
  };
  const code = typeof body.code === "string" ? body.code : null;
  const nested =
    typeof body.error === "string"
      ? body.error
      : (body.error as { message?: unknown } | null | undefined)?.message;
  // A JSON body that names only a code says all it has; any other body is its own best words.
  const detail =
    typeof body.detail === "string"
      ? body.detail
      : typeof body.message === "string"
        ? body.message
        : typeof nested === "string"
          ? nested
          : body.detail !== undefined
            ? JSON.stringify(body.detail)
            : parsed !== null && code !== null
              ? ""
              : bytes.toString("utf8");
  const clipped = detail.replace(/\s+/g, " ").trim().slice(0, 300);
  return { code, detail: clipped === "" ? null : redact(clipped) };
}

async function readCapped(response: Response, max: number): Promise<Buffer> {
  if (!response.body) return Buffer.alloc(0);
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > max) {
      await reader.cancel();
      throw new WorkerClientError(`the answer is larger than ${max} bytes`, "too_large");
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

function describe(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (error as Error).message ?? String(error);
}

/** Waits `ms`; false when `signal` aborted the wait. */
function sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
  if (signal?.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", stop);
      resolve(true);
    }, ms);
    const stop = () => {
      clearTimeout(timer);
      resolve(false);
    };
    signal?.addEventListener("abort", stop, { once: true });
  });
}
