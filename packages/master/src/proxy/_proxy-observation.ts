// One proxied request's instruments: its metrics (platform_proxy_requests_total and the duration
// histogram; for a signed upload, platform_signed_uploads_total) and, with tracing on, its span.
// Every way in (the native handlers and the kit's routes) makes one when it takes the request and
// reports exactly one ending: the challenge's answer head, the proxy's own refusal, or the client
// leaving first. With metrics off and tracing off, `observe` hands out one shared no-op.
import {
  failSpan,
  headDecision,
  injectSpanHeaders,
  injectTraceHeaders,
  isHttpError,
  startSpan,
  type TraceContext,
  type TraceHeaderReader,
  type TraceSpan,
  tracingEnabled,
} from "@platform/core";
import { type MasterMetrics, UNKNOWN_SLUG } from "../ops/master-metrics.js";
import type { ChallengeStore } from "../registry/challenge-store.js";

/** What a proxied request is: the passthrough (and submission status read), or a signed upload. */
export type ProxiedKind = "passthrough" | "upload";

/** Where an observation reports to. */
export interface ObservationTargets {
  metrics?: MasterMetrics | undefined;
  /** To label early refusals with a slug the registry knows (its cache only, no query). */
  store?: Pick<ChallengeStore, "cachedActive"> | undefined;
}

// A client's outcome label: an error code the master itself produced (literals in its code).
const CODE = /^[a-z][a-z0-9_]{0,47}$/;

/** The instruments of one proxied request. */
export class ProxyObservation {
  private slug: string | undefined;
  private candidate: string | undefined;
  private done = false;
  private readonly started = performance.now();
  /** The request's span (tracing on, sampled); the challenge continues it ({@link ProxyObservation.inject}). */
  readonly span: TraceSpan | undefined;
  // Tracing on, not sampled: the traceparent that tells the challenge so (undefined: the
  // client's own already does, and passes unchanged).
  private readonly unsampled: string | undefined;

  constructor(
    private readonly targets: ObservationTargets,
    private readonly kind: ProxiedKind,
    headers: TraceHeaderReader | undefined,
    /** A kit route's: the context of the kit's server span, which covers the request. */
    private readonly parent?: TraceContext,
  ) {
    if (tracingEnabled() && headers) {
      // Decided before any span exists: a request nobody samples makes none (head-sampling.ts).
      const head = headDecision(headers);
      if (head.sampled) {
        this.span = startSpan(kind === "upload" ? "proxy signed upload" : "proxy", {
          kind: "server",
          parent: head.parent,
        });
      } else this.unsampled = head.traceparent;
    }
  }

  /** The slug the request names (labelled only if the registry knows it). */
  names(slug: string): void {
    this.candidate = slug;
  }

  /** The request's challenge is active: its slug is a label from now on. */
  known(slug: string): void {
    this.slug = slug;
    this.span?.setAttribute("platform.challenge.slug", slug);
  }

  /**
   * Put this request's `traceparent` in the headers it is forwarded with (tracing on), without
   * making the span active: no context switch on the hot path. Not sampled, the challenge is told
   * so (flags 00) and does not decide again.
   */
  inject(headers: Record<string, string>): void {
    if (this.span) injectSpanHeaders(this.span, headers);
    else if (this.unsampled !== undefined) headers["traceparent"] = this.unsampled;
    else if (this.parent) injectTraceHeaders(headers, this.parent);
  }

  /** The challenge answered with `status` (its head is being written now). */
  upstreamAnswered(status: number): void {
    this.end(
      status,
      status < 400 ? "accepted" : status < 500 ? "challenge_rejected" : "challenge_error",
    );
  }

  /** The proxy refused or failed the request itself with `error` (an HttpError, or a 500). */
  refused(error: unknown): void {
    const status = isHttpError(error) ? error.status : 500;
    const code = isHttpError(error) && CODE.test(error.code) ? error.code : "internal_error";
    if (this.span) failSpan(this.span, error);
    this.end(status, code);
  }

  /** The client went away before any answer was written. */
  clientLeft(): void {
    this.end(499, "client_closed");
  }

  private end(status: number, outcome: string): void {
    if (this.done) return;
    this.done = true;
    const { metrics, store } = this.targets;
    if (metrics?.enabled) {
      let slug = this.slug;
      if (slug === undefined && this.candidate !== undefined && store?.cachedActive(this.candidate))
        slug = this.candidate;
      slug ??= UNKNOWN_SLUG;
      metrics.proxyRequest(slug, status, (performance.now() - this.started) / 1000);
      if (this.kind === "upload") metrics.signedUpload(slug, outcome);
    }
    if (this.span) {
      this.span.setAttribute("http.response.status_code", status);
      if (status >= 500) failSpan(this.span, new Error(`HTTP ${status}`));
      this.span.end();
    }
  }
}

/** A shared observation that records nothing (metrics off, tracing off). */
const NOTHING = new ProxyObservation({}, "passthrough", undefined);

/**
 * The observation of one proxied request: a real one when metrics are recorded or tracing is
 * on, else a shared no-op (one branch per request).
 */
export function observe(
  targets: ObservationTargets,
  kind: ProxiedKind,
  /** The request's headers, for a span of its own (none: the kit's server span covers it). */
  headers: TraceHeaderReader | undefined,
  /** Without headers: the kit's server span's context (`requestTraceContext`), continued. */
  parent?: TraceContext,
): ProxyObservation {
  if (!targets.metrics?.enabled && !tracingEnabled()) return NOTHING;
  return new ProxyObservation(targets, kind, headers, parent);
}
