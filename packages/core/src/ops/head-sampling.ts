// Head sampling decided before any span exists, for the hot path of a server that takes a request
// and passes it on (the master's proxy). With tracing on, the OpenTelemetry way costs a request
// nobody samples about 5 µs of JavaScript: the propagators read `traceparent` into a context, a
// non-recording span is made, ended, and injected back through the composed propagators. Here the
// same decision is a string test and one random number, from the same OTEL_TRACES_SAMPLER and
// OTEL_TRACES_SAMPLER_ARG the SDK documents, parsed once (`samplerSettings`): only a sampled
// request makes a span, and an unsampled one forwards the decision (W3C `traceparent`, flags 00)
// so the next service does not decide again.
//
// The decision is made once: a span started in a context marked by `HEAD_SAMPLED` is recorded
// whatever the SDK's sampler would roll for it (`HeadFirstSampler`), and every other span is left
// to the configured sampler, built from the same settings.
import { randomFillSync } from "node:crypto";
import {
  type Attributes,
  type Context,
  createContextKey,
  createTraceState,
  type Link,
  ROOT_CONTEXT,
  type SpanKind,
  trace,
} from "@opentelemetry/api";

/** The configured sampler, as OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG define it. */
export interface SamplerSettings {
  /** Follow a caller's sampled flag (the `parentbased_*` samplers). */
  readonly parentBased: boolean;
  /** A trace's own decision: always, never, or this share of trace ids. */
  readonly root: "always_on" | "always_off" | number;
}

const SAMPLERS: Record<
  string,
  Omit<SamplerSettings, "root"> & { root: "always_on" | "always_off" | "ratio" }
> = {
  always_on: { parentBased: false, root: "always_on" },
  always_off: { parentBased: false, root: "always_off" },
  traceidratio: { parentBased: false, root: "ratio" },
  parentbased_always_on: { parentBased: true, root: "always_on" },
  parentbased_always_off: { parentBased: true, root: "always_off" },
  parentbased_traceidratio: { parentBased: true, root: "ratio" },
};

/**
 * The sampler the environment configures, with the SDK's rules: unset or unknown is
 * `parentbased_always_on`; a ratio that is missing or outside [0, 1] is 1.
 */
export function samplerSettings(env: Record<string, string | undefined>): SamplerSettings {
  const name = (env["OTEL_TRACES_SAMPLER"] ?? "").trim().toLowerCase();
  const chosen = SAMPLERS[name] ?? SAMPLERS["parentbased_always_on"]!;
  if (chosen.root !== "ratio") return { parentBased: chosen.parentBased, root: chosen.root };
  const ratio = Number((env["OTEL_TRACES_SAMPLER_ARG"] ?? "").trim() || Number.NaN);
  return { parentBased: chosen.parentBased, root: ratio >= 0 && ratio <= 1 ? ratio : 1 };
}

/** The context key a head decision marks: a span started under it is recorded. */
export const HEAD_SAMPLED = createContextKey("platform head sampled");

/** What a request's head decision says. */
export type HeadDecision =
  /** Make the span, in `parent` (the caller's trace continued, or a new one). */
  | { readonly sampled: true; readonly parent: Context }
  /**
   * Make no span; forward `traceparent` instead (undefined: the caller's own passes unchanged,
   * it already says "not sampled").
   */
  | { readonly sampled: false; readonly traceparent: string | undefined };

// W3C trace-context: version-traceid-parentid-flags; version ff is invalid, all-zero ids are
// invalid, and version 00 has nothing after the flags.
const TRACEPARENT =
  /^\s?(?!ff)([\da-f]{2})-((?![0]{32})[\da-f]{32})-((?![0]{16})[\da-f]{16})-([\da-f]{2})(-.*)?\s?$/;

/** Where a request's `traceparent` and `tracestate` are read (web `Headers`, a node request's view). */
export interface TraceHeaders {
  get(name: string): string | null | undefined;
}

/**
 * The head decision for a request with `headers` (W3C trace context), under `settings`: the
 * decision the SDK's sampler would make for its server span, without making one.
 */
export function decideHead(settings: SamplerSettings, headers: TraceHeaders): HeadDecision {
  const traceparent = headers.get("traceparent");
  const parent = traceparent ? TRACEPARENT.exec(traceparent) : null;
  if (parent === null || (parent[1] === "00" && parent[5] !== undefined)) {
    // A new trace: its own decision (a ratio is a share of random trace ids, so a coin).
    const { root } = settings;
    const sampled = root === "always_on" || (root !== "always_off" && Math.random() < root);
    if (sampled) return { sampled, parent: ROOT_CONTEXT.setValue(HEAD_SAMPLED, true) };
    return { sampled, traceparent: `00-${randomHex(16)}-${randomHex(8)}-00` };
  }
  const [, , traceId, spanId, flags] = parent as unknown as [
    string,
    string,
    string,
    string,
    string,
  ];
  const callerSampled = (Number.parseInt(flags, 16) & 1) === 1;
  const sampled = settings.parentBased ? callerSampled : rootSamples(settings.root, traceId);
  if (sampled) {
    // The caller's span, as the W3C propagator reads it (tracestate only read here).
    const state = headers.get("tracestate");
    const caller = trace.setSpanContext(ROOT_CONTEXT, {
      traceId,
      spanId,
      traceFlags: Number.parseInt(flags, 16),
      isRemote: true,
      ...(state ? { traceState: createTraceState(state) } : {}),
    });
    return { sampled, parent: caller.setValue(HEAD_SAMPLED, true) };
  }
  return { sampled, traceparent: callerSampled ? `00-${traceId}-${spanId}-00` : undefined };
}

// The SDK's TraceIdRatioBasedSampler: the trace id's 32-bit words XORed, against ratio x 2^32-1.
function rootSamples(root: SamplerSettings["root"], traceId: string): boolean {
  if (root === "always_on" || root === "always_off") return root === "always_on";
  let accumulated = 0;
  for (let i = 0; i < 32; i += 8)
    accumulated = (accumulated ^ Number.parseInt(traceId.slice(i, i + 8), 16)) >>> 0;
  return accumulated <= Math.floor(root * 0xffffffff);
}

// Random ids from a pool refilled 4 KiB at a time: an unsampled request needs a trace id and a
// span id for the traceparent it forwards, not a crypto call each.
const pool = Buffer.alloc(4096);
let used = pool.length;

function randomHex(bytes: number): string {
  for (;;) {
    if (used + bytes > pool.length) {
      randomFillSync(pool);
      used = 0;
    }
    const hex = pool.toString("hex", used, used + bytes);
    used += bytes;
    if (/[^0]/.test(hex)) return hex; // all zeros is not a valid id
  }
}

/** A sampler as `@opentelemetry/sdk-trace-base` defines one (the part used here). */
export interface SamplerLike {
  shouldSample(
    context: Context,
    traceId: string,
    spanName: string,
    spanKind: SpanKind,
    attributes: Attributes,
    links: Link[],
  ): { decision: number; attributes?: Attributes };
  toString(): string;
}

/** The sampler classes of `@opentelemetry/sdk-trace-base` (passed in: it is loaded only when on). */
export interface SamplerClasses {
  AlwaysOnSampler: new () => SamplerLike;
  AlwaysOffSampler: new () => SamplerLike;
  TraceIdRatioBasedSampler: new (ratio: number) => SamplerLike;
  ParentBasedSampler: new (config: { root: SamplerLike }) => SamplerLike;
  SamplingDecision: { RECORD_AND_SAMPLED: number };
}

/**
 * The sampler the SDK is given: a span started under a head decision ({@link HEAD_SAMPLED}) is
 * recorded, every other one is decided by the sampler `settings` configure.
 */
export function headFirstSampler(settings: SamplerSettings, classes: SamplerClasses): SamplerLike {
  const root =
    settings.root === "always_on"
      ? new classes.AlwaysOnSampler()
      : settings.root === "always_off"
        ? new classes.AlwaysOffSampler()
        : new classes.TraceIdRatioBasedSampler(settings.root);
  const configured = settings.parentBased ? new classes.ParentBasedSampler({ root }) : root;
  const recorded = { decision: classes.SamplingDecision.RECORD_AND_SAMPLED };
  return {
    shouldSample: (context, ...rest) =>
      context.getValue(HEAD_SAMPLED) === true
        ? recorded
        : configured.shouldSample(context, ...rest),
    toString: () => `HeadFirst{${configured.toString()}}`,
  };
}
