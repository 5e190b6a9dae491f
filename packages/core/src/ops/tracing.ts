// OpenTelemetry traces for every server of the platform: off unless the standard
// OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set, and then the
// OpenTelemetry Node SDK reads the other OTEL_* variables (protocol, headers, service name,
// sampler, resource attributes) as it documents them. Spans are made by hand where a request
// crosses a boundary (the app kit, the master's proxy, the SDK's job queue and broker client,
// database queries): no automatic instrumentation patches node's modules.
//
// Off, every helper here is one branch on a module boolean: no context lookup, no allocation.
import {
  type Context,
  context,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from "@opentelemetry/api";
import {
  decideHead,
  type HeadDecision,
  headFirstSampler,
  type SamplerClasses,
  type SamplerSettings,
  samplerSettings,
} from "./head-sampling.js";
import { SynchronousContextManager } from "./synchronous-context.js";

let enabled = false;
let sampling: SamplerSettings = { parentBased: true, root: "always_on" };
let tracer: Tracer | undefined;
let active: Promise<Tracing> | undefined;
let provider: { forceFlush(): Promise<void>; shutdown(): Promise<void> } | undefined;

/** A span processor, as `@opentelemetry/sdk-trace-base` defines one (tests pass an in-memory one). */
export interface TraceSpanProcessor {
  forceFlush(): Promise<void>;
  shutdown(): Promise<void>;
  onStart(span: never, parentContext: Context): void;
  onEnd(span: never): void;
}

/** Options of {@link startTracing}. */
export interface StartTracingOptions {
  /** `service.name` of every span, unless OTEL_SERVICE_NAME says otherwise. */
  serviceName: string;
  /** Where OTEL_EXPORTER_OTLP_ENDPOINT is read (default `process.env`). */
  env?: Record<string, string | undefined>;
  /**
   * Span processors to use instead of the exporter the OTEL_* variables configure; tracing is
   * then on whatever the environment says (tests pass a SimpleSpanProcessor over an
   * InMemorySpanExporter from `@opentelemetry/sdk-trace-base`).
   */
  spanProcessors?: TraceSpanProcessor[];
  /**
   * How a span's context reaches the code it covers. `"async"` (default): the SDK's
   * AsyncLocalStorage carries it across `await`, so every span made inside (a database query, an
   * outgoing request) finds its parent. `"explicit"`: no AsyncLocalStorage (up to Node 22 it
   * makes every async resource of the process dearer; from 24 it costs little); a span is active only for the synchronous call,
   * and code passes the context on itself: `withSpan`'s callback gets it, and `startSpan`,
   * `withSpan` and `injectTraceHeaders` take it as their parent ({@link requestTraceContext} is a
   * kit request's). The master uses it; a process that also serves challenges must not.
   */
  context?: "async" | "explicit";
}

/** Tracing as started: whether it is on, and how to flush or stop it. */
export interface Tracing {
  readonly enabled: boolean;
  /** Export what is buffered now (before a process exits). */
  flush(): Promise<void>;
  /** Flush, then stop: spans are no longer made. */
  shutdown(): Promise<void>;
}

const OFF: Tracing = {
  enabled: false,
  flush: async () => {},
  shutdown: async () => {},
};

/** Whether the environment asks for traces: an OTLP endpoint is set and the SDK is not disabled. */
export function tracingRequested(env: Record<string, string | undefined> = process.env): boolean {
  if ((env["OTEL_SDK_DISABLED"] ?? "").trim().toLowerCase() === "true") return false;
  if ((env["OTEL_TRACES_EXPORTER"] ?? "").trim().toLowerCase() === "none") return false;
  return Boolean(
    env["OTEL_EXPORTER_OTLP_ENDPOINT"]?.trim() || env["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"]?.trim(),
  );
}

/**
 * Start tracing for this process, once: the first call decides (later calls get the same
 * answer), so a library that calls it (createMaster, a challenge's start) never overrides the
 * process's own setup. Off unless an OTLP endpoint is configured or `spanProcessors` are given;
 * the OpenTelemetry SDK is only loaded when on.
 * @example await startTracing({ serviceName: "my-challenge" }); // OTEL_EXPORTER_OTLP_ENDPOINT=http://collector:4318
 */
export function startTracing(options: StartTracingOptions): Promise<Tracing> {
  active ??= begin(options);
  return active;
}

async function begin(options: StartTracingOptions): Promise<Tracing> {
  if (!options.spanProcessors && !tracingRequested(options.env)) return OFF;
  const { NodeSDK } = await import("@opentelemetry/sdk-node");
  const samplers = (await import("@opentelemetry/sdk-trace-base")) as unknown as SamplerClasses;
  const env = options.env ?? process.env;
  sampling = samplerSettings(env);
  const sdk = new NodeSDK({
    serviceName: env["OTEL_SERVICE_NAME"]?.trim() || options.serviceName,
    // The sampler OTEL_TRACES_SAMPLER names, behind the head decisions of `headDecision`.
    sampler: headFirstSampler(sampling, samplers) as never,
    ...(options.context === "explicit" ? { contextManager: new SynchronousContextManager() } : {}),
    // Traces only: metrics are Prometheus' (/metrics), logs are JSON lines on stderr.
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [],
    ...(options.spanProcessors ? { spanProcessors: options.spanProcessors as never[] } : {}),
  });
  sdk.start();
  const registered = trace.getTracerProvider() as unknown as {
    getDelegate?: () => { forceFlush?: () => Promise<void> };
  };
  const delegate = registered.getDelegate?.();
  provider = {
    forceFlush: async () => {
      await delegate?.forceFlush?.();
    },
    shutdown: () => sdk.shutdown(),
  };
  tracer = trace.getTracer("@platform/core");
  enabled = true;
  let stopped: Promise<void> | undefined;
  return {
    enabled: true,
    flush: () => flushTracing(),
    shutdown: () =>
      (stopped ??= (async () => {
        enabled = false;
        await sdk.shutdown();
      })()),
  };
}

/** True once {@link startTracing} turned tracing on: the one branch every helper takes first. */
export function tracingEnabled(): boolean {
  return enabled;
}

/** Export the spans buffered so far (no-op when tracing is off). */
export async function flushTracing(): Promise<void> {
  if (enabled) await provider?.forceFlush();
}

/** The tracer spans are made with (only call when {@link tracingEnabled}). */
export function platformTracer(): Tracer {
  tracer ??= trace.getTracer("@platform/core");
  return tracer;
}

/**
 * Whether a request with `headers` (its W3C `traceparent`, or none) is sampled, decided as the
 * configured sampler would for its server span but without making one: a hot path makes its span
 * only when `sampled` (in `parent`), and otherwise forwards `traceparent` when one is given. Only
 * call when {@link tracingEnabled}.
 * @example const head = headDecision(request.headers); if (head.sampled) span = startSpan("proxy", { kind: "server", parent: head.parent });
 */
export function headDecision(headers: TraceHeaderReader): HeadDecision {
  return decideHead(sampling, headers);
}

/** A header reader: web `Headers`, or anything with `get(name)` (a node request's raw view). */
export interface TraceHeaderReader {
  get(name: string): string | null | undefined;
}

const HEADER_GETTER = {
  get: (carrier: TraceHeaderReader, key: string) => carrier.get(key) ?? undefined,
  keys: () => ["traceparent", "tracestate"],
};

const RECORD_SETTER = {
  set: (carrier: Record<string, string>, key: string, value: string) => {
    carrier[key] = value;
  },
};

/** The context a request's `traceparent`/`tracestate` headers carry (W3C), over the active one. */
export function extractTraceContext(headers: TraceHeaderReader): Context {
  return propagation.extract(context.active(), headers, HEADER_GETTER);
}

/**
 * Write the `traceparent` (and `tracestate`) of `parent`'s span (default: the active span) into
 * `headers`, so the next service continues this trace. No-op when tracing is off or there is no
 * span.
 */
export function injectTraceHeaders(
  headers: Record<string, string>,
  parent: Context = context.active(),
): void {
  if (!enabled) return;
  // No span, nothing to continue: skip the propagators (a hot path outside any span).
  if (trace.getSpanContext(parent) === undefined) return;
  propagation.inject(parent, headers, RECORD_SETTER);
}

// The context of each traced kit request's server span (app.ts), for explicit parents.
const requestContexts = new WeakMap<object, Context>();

/**
 * The context of `request`'s server `span` (started in `parent`), remembered for
 * {@link requestTraceContext}: what the kit runs a traced request in.
 */
export function requestSpanContext(request: object, span: Span, parent: Context): Context {
  const spanContext = trace.setSpan(parent, span);
  requestContexts.set(request, spanContext);
  return spanContext;
}

/**
 * The context of a kit request's server span (tracing on), to pass as `parent` across an
 * `await` when tracing runs without AsyncLocalStorage; undefined when the request has none.
 * @example await withSpan("run", work, { parent: requestTraceContext(ctx.request) });
 */
export function requestTraceContext(request: object): Context | undefined {
  return enabled ? requestContexts.get(request) : undefined;
}

/**
 * Write `span`'s `traceparent` (and `tracestate`) into `headers`: for a caller that holds its
 * span without making it active (a hot path that skips the context switch).
 */
export function injectSpanHeaders(span: Span, headers: Record<string, string>): void {
  if (!enabled) return;
  propagation.inject(trace.setSpan(context.active(), span), headers, RECORD_SETTER);
}

/** The active span's `traceparent` header value, or null (tracing off, no span). */
export function activeTraceparent(): string | null {
  if (!enabled) return null;
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier, RECORD_SETTER);
  return carrier["traceparent"] ?? null;
}

/** The context a stored `traceparent` names (a job enqueued during a traced request). */
export function traceContextOf(traceparent: string | null | undefined): Context {
  const carrier = { get: (name: string) => (name === "traceparent" ? traceparent : undefined) };
  return propagation.extract(context.active(), carrier, HEADER_GETTER);
}

/** Whether a span (recording or not) is active: work done outside any has no trace to join. */
export function insideSpan(): boolean {
  return enabled && trace.getSpan(context.active()) !== undefined;
}

/** Trace and span ids of the active span, for a log line; undefined when none is recording. */
export function activeTraceIds(): { trace_id: string; span_id: string } | undefined {
  if (!enabled) return undefined;
  const span = trace.getActiveSpan();
  if (!span) return undefined;
  const { traceId, spanId } = span.spanContext();
  return { trace_id: traceId, span_id: spanId };
}

/** Attributes a span may carry (OpenTelemetry's scalar values). */
export type SpanAttributes = Record<string, string | number | boolean | undefined>;

/** Options of {@link withSpan}. */
export interface WithSpanOptions {
  kind?: "internal" | "server" | "client" | "producer" | "consumer";
  attributes?: SpanAttributes;
  /** The parent (default: the active context). */
  parent?: Context;
}

const KINDS = {
  internal: SpanKind.INTERNAL,
  server: SpanKind.SERVER,
  client: SpanKind.CLIENT,
  producer: SpanKind.PRODUCER,
  consumer: SpanKind.CONSUMER,
} as const;

function clean(attributes: SpanAttributes | undefined): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const [key, value] of Object.entries(attributes ?? {}))
    if (value !== undefined) out[key] = value;
  return out;
}

/** Start a span (tracing must be on): the caller ends it. */
export function startSpan(name: string, options: WithSpanOptions = {}): Span {
  return platformTracer().startSpan(
    name,
    { kind: KINDS[options.kind ?? "internal"], attributes: clean(options.attributes) },
    options.parent ?? context.active(),
  );
}

/** Run `fn` with `span` as the active span. */
export function runInSpan<T>(span: Span, fn: () => T): T {
  return context.with(trace.setSpan(context.active(), span), fn);
}

/** Run `fn` in `parent` (a context from {@link extractTraceContext} or {@link traceContextOf}). */
export function runInContext<T>(parent: Context, fn: () => T): T {
  return context.with(parent, fn);
}

/** Mark a span failed with `error` (its message only: never a value that could hold a secret). */
export function failSpan(span: Span, error: unknown): void {
  const message = error instanceof Error ? error.message : String(error);
  span.setStatus({ code: SpanStatusCode.ERROR, message: message.slice(0, 200) });
  span.setAttribute("error.type", error instanceof Error ? error.name : typeof error);
}

/**
 * Run `fn` in a new span named `name` that ends when `fn` settles (failed if it throws); with
 * tracing off, just `fn()`. `fn` gets the span's context, to pass on as a parent where the
 * active context does not reach (tracing with `context: "explicit"`).
 * @example await withSpan("score submission", () => score(id), { attributes: { "job.queue": "score" } });
 */
export function withSpan<T>(
  name: string,
  fn: (context: Context) => Promise<T>,
  options?: WithSpanOptions,
): Promise<T>;
export function withSpan<T>(
  name: string,
  fn: (context: Context) => T,
  options?: WithSpanOptions,
): T;
export function withSpan<T>(
  name: string,
  fn: (context: Context) => T,
  options: WithSpanOptions = {},
): T {
  if (!enabled) return fn(ROOT_CONTEXT);
  const parent = options.parent ?? context.active();
  const span = startSpan(name, { ...options, parent });
  const spanContext = trace.setSpan(parent, span);
  let result: T;
  try {
    result = context.with(spanContext, () => fn(spanContext));
  } catch (error) {
    failSpan(span, error);
    span.end();
    throw error;
  }
  if (result instanceof Promise) {
    return result.then(
      (value) => {
        span.end();
        return value;
      },
      (error: unknown) => {
        failSpan(span, error);
        span.end();
        throw error;
      },
    ) as T;
  }
  span.end();
  return result;
}

export type { Context as TraceContext, HeadDecision, Span as TraceSpan };
