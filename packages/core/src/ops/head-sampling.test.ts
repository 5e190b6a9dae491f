// The proxy's head decision must be the decision the OpenTelemetry SDK's sampler makes for the
// same request (else a trace breaks at the master, or a request nobody wanted is recorded), and
// an unsampled request must tell the next service so. Compared here against the SDK's own
// samplers, without starting tracing (nothing global is installed).
import { type Context, ROOT_CONTEXT, SpanKind, trace } from "@opentelemetry/api";
import * as sdk from "@opentelemetry/sdk-trace-base";
import { describe, expect, it } from "vitest";
import {
  decideHead,
  HEAD_SAMPLED,
  headFirstSampler,
  type SamplerClasses,
  type SamplerSettings,
  samplerSettings,
} from "./head-sampling.js";

const classes = sdk as unknown as SamplerClasses;
const FORWARDED = /^00-([\da-f]{32})-([\da-f]{16})-00$/;
const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT_ID = "00f067aa0ba902b7";
const SAMPLED_PARENT = `00-${TRACE_ID}-${PARENT_ID}-01`;
const UNSAMPLED_PARENT = `00-${TRACE_ID}-${PARENT_ID}-00`;

const hex = (bytes: number) =>
  Buffer.from(crypto.getRandomValues(new Uint8Array(bytes))).toString("hex");
const randomTraceparent = (sampled: boolean) => `00-${hex(16)}-${hex(8)}-${sampled ? "01" : "00"}`;
/** A request's headers holding `traceparent` (and `tracestate`) when given. */
const headers = (traceparent?: string | null, tracestate?: string) => ({
  get: (name: string) =>
    name === "traceparent" ? traceparent : name === "tracestate" ? tracestate : undefined,
});

/** What the SDK's sampler (the one startTracing installs, unmarked) decides for a server span. */
function sdkSamples(settings: SamplerSettings, traceparent: string | undefined): boolean {
  const [, traceId = hex(16), spanId = hex(8), flags = "01"] = traceparent?.split("-") ?? [];
  const parent: Context = traceparent
    ? trace.setSpanContext(ROOT_CONTEXT, {
        traceId,
        spanId,
        traceFlags: Number.parseInt(flags, 16),
        isRemote: true,
      })
    : ROOT_CONTEXT;
  const { decision } = headFirstSampler(settings, classes).shouldSample(
    parent,
    traceId,
    "proxy",
    SpanKind.SERVER,
    {},
    [],
  );
  return decision === sdk.SamplingDecision.RECORD_AND_SAMPLED;
}

describe("samplerSettings", () => {
  it("reads OTEL_TRACES_SAMPLER and its argument (names in any case, as the specification asks)", () => {
    expect(samplerSettings({})).toEqual({ parentBased: true, root: "always_on" });
    expect(samplerSettings({ OTEL_TRACES_SAMPLER: "always_off" })).toEqual({
      parentBased: false,
      root: "always_off",
    });
    expect(samplerSettings({ OTEL_TRACES_SAMPLER: " ParentBased_Always_Off " })).toEqual({
      parentBased: true,
      root: "always_off",
    });
    expect(
      samplerSettings({ OTEL_TRACES_SAMPLER: "traceidratio", OTEL_TRACES_SAMPLER_ARG: "0.25" }),
    ).toEqual({ parentBased: false, root: 0.25 });
    expect(
      samplerSettings({
        OTEL_TRACES_SAMPLER: "parentbased_traceidratio",
        OTEL_TRACES_SAMPLER_ARG: "0",
      }),
    ).toEqual({ parentBased: true, root: 0 });
  });

  it("falls back like the SDK: an unknown sampler is parentbased_always_on, a bad ratio is 1", () => {
    expect(samplerSettings({ OTEL_TRACES_SAMPLER: "jaeger_remote" })).toEqual({
      parentBased: true,
      root: "always_on",
    });
    for (const arg of [undefined, "", "1.5", "-0.1", "ten"])
      expect(
        samplerSettings({ OTEL_TRACES_SAMPLER: "traceidratio", OTEL_TRACES_SAMPLER_ARG: arg }),
      ).toEqual({ parentBased: false, root: 1 });
  });
});

describe("decideHead", () => {
  it("agrees with the SDK's sampler for every sampler, with and without a caller's trace", () => {
    const settings: SamplerSettings[] = [];
    for (const parentBased of [true, false])
      for (const root of ["always_on", "always_off", 0, 0.3, 1] as const)
        settings.push({ parentBased, root });
    for (const setting of settings) {
      for (let i = 0; i < 200; i++) {
        // A caller's trace: the decision depends only on the traceparent, so it must match.
        const traceparent = randomTraceparent(i % 2 === 0);
        expect([setting, traceparent, decideHead(setting, headers(traceparent)).sampled]).toEqual([
          setting,
          traceparent,
          sdkSamples(setting, traceparent),
        ]);
      }
      // A new trace under a ratio is a coin on both sides; the fixed roots must match.
      if (typeof setting.root !== "number" || setting.root === 0 || setting.root === 1)
        expect(decideHead(setting, headers(undefined)).sampled).toBe(
          sdkSamples(setting, undefined),
        );
    }
  });

  it("samples a share of new traces close to the configured ratio", () => {
    const settings = { parentBased: true, root: 0.1 };
    let sampled = 0;
    for (let i = 0; i < 20_000; i++) if (decideHead(settings, headers(null)).sampled) sampled++;
    // Binomial(20,000, 0.1): standard deviation 42; six of them either side.
    expect(sampled).toBeGreaterThan(2000 - 255);
    expect(sampled).toBeLessThan(2000 + 255);
  });

  it("continues a sampled caller's trace and its tracestate, marked so the SDK records it", () => {
    const head = decideHead(
      { parentBased: true, root: "always_off" },
      headers(SAMPLED_PARENT, "vendor=abc,other=1"),
    );
    expect(head.sampled).toBe(true);
    if (!head.sampled) return;
    const caller = trace.getSpanContext(head.parent);
    expect(caller).toMatchObject({
      traceId: TRACE_ID,
      spanId: PARENT_ID,
      isRemote: true,
      traceFlags: 1,
    });
    expect(caller?.traceState?.serialize()).toBe("vendor=abc,other=1");
    expect(head.parent.getValue(HEAD_SAMPLED)).toBe(true);
  });

  it("starts a new trace when sampled without a caller (no parent span in the context)", () => {
    const head = decideHead({ parentBased: true, root: "always_on" }, headers(undefined));
    expect(head.sampled).toBe(true);
    if (!head.sampled) return;
    expect(trace.getSpanContext(head.parent)).toBeUndefined();
    expect(head.parent.getValue(HEAD_SAMPLED)).toBe(true);
  });

  it("leaves a caller's unsampled traceparent to pass unchanged", () => {
    expect(decideHead({ parentBased: true, root: "always_on" }, headers(UNSAMPLED_PARENT))).toEqual(
      {
        sampled: false,
        traceparent: undefined,
      },
    );
  });

  it("tells the next service a sampled caller's trace is not sampled here (flags 00, same ids)", () => {
    // Not parent-based: the ratio decides on the caller's trace id, and 0 refuses every id.
    expect(decideHead({ parentBased: false, root: 0 }, headers(SAMPLED_PARENT))).toEqual({
      sampled: false,
      traceparent: UNSAMPLED_PARENT,
    });
  });

  it("forwards a fresh unsampled traceparent for a new trace not sampled, new ids each time", () => {
    const seen = new Set<string>();
    for (let i = 0; i < 2_000; i++) {
      const head = decideHead({ parentBased: true, root: "always_off" }, headers(undefined));
      expect(head.sampled).toBe(false);
      if (head.sampled) return;
      const match = FORWARDED.exec(head.traceparent ?? "");
      expect(match, head.traceparent).not.toBeNull();
      expect(match![1]).not.toMatch(/^0+$/);
      expect(match![2]).not.toMatch(/^0+$/);
      seen.add(match![1]!);
    }
    expect(seen.size).toBe(2_000);
  });

  it("treats a malformed traceparent as none (a new trace), as the W3C propagator does", () => {
    const malformed = [
      `ff-${TRACE_ID}-${PARENT_ID}-01`, // version ff is invalid
      `00-${"0".repeat(32)}-${PARENT_ID}-01`, // all-zero trace id
      `00-${TRACE_ID}-${"0".repeat(16)}-01`, // all-zero span id
      `00-${TRACE_ID}-${PARENT_ID}-01-extra`, // version 00 has nothing after the flags
      `00-${TRACE_ID.toUpperCase()}-${PARENT_ID}-01`, // upper case
      `00-${TRACE_ID}-${PARENT_ID}`, // no flags
      "garbage",
      "x".repeat(10_000),
    ];
    for (const traceparent of malformed) {
      const head = decideHead({ parentBased: true, root: "always_off" }, headers(traceparent));
      expect([traceparent, head.sampled]).toEqual([traceparent, false]);
      if (head.sampled) return;
      const match = FORWARDED.exec(head.traceparent ?? "");
      expect(match).not.toBeNull();
      expect(match![1]).not.toBe(TRACE_ID);
    }
    // A later version may carry more fields: its first four are read.
    const future = decideHead(
      { parentBased: true, root: "always_off" },
      headers(`01-${TRACE_ID}-${PARENT_ID}-01-more`),
    );
    expect(future.sampled).toBe(true);
  });
});

describe("headFirstSampler", () => {
  it("records a span started under a head decision whatever the configured sampler says", () => {
    const sampler = headFirstSampler({ parentBased: false, root: "always_off" }, classes);
    const marked = ROOT_CONTEXT.setValue(HEAD_SAMPLED, true);
    const decide = (context: Context) =>
      sampler.shouldSample(context, TRACE_ID, "proxy", SpanKind.SERVER, {}, []).decision;
    expect(decide(marked)).toBe(sdk.SamplingDecision.RECORD_AND_SAMPLED);
    expect(decide(ROOT_CONTEXT)).toBe(sdk.SamplingDecision.NOT_RECORD);
    expect(sampler.toString()).toBe("HeadFirst{AlwaysOffSampler}");
  });
});
