import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FuzzOpenApiOptions, fuzzOpenApi, summarizeFuzzReport } from "./fuzz-openapi.js";

/** A server to fuzz: what {@link fuzzOpenApi} takes, and how to stop the server afterwards. */
export interface FuzzTarget extends FuzzOpenApiOptions {
  close?: () => void | Promise<void>;
}

/**
 * Register one vitest test that fuzzes a server from its own `/openapi.json` (see
 * `fuzzOpenApi`), logs the routes covered and requests sent, and fails on any finding, on a
 * route that got no request, or on running out of time.
 * @example runOpenApiFuzz("echo", async () => { const t = await startTestChallenge(c); return { ...challengeFuzzOptions(t), close: t.close }; });
 */
export function runOpenApiFuzz(
  name: string,
  start: () => FuzzTarget | Promise<FuzzTarget>,
  options: { timeoutMs?: number } = {},
): void {
  describe(`${name}: OpenAPI fuzz`, () => {
    let target: FuzzTarget | undefined;
    beforeAll(async () => {
      target = await start();
    });
    afterAll(() => target?.close?.());

    it(
      "answers every generated request with no 5xx, stack trace, internal address or secret",
      async () => {
        if (!target) throw new Error("the server did not start (see the beforeAll error)");
        const report = await fuzzOpenApi(target);
        console.info(`OpenAPI fuzz of ${name}: ${summarizeFuzzReport(report)}`);
        expect(report.routes.length, "routes in the OpenAPI document").toBeGreaterThan(0);
        expect(
          report.routes.filter((route) => route.requests === 0).map((route) => route.route),
          "routes that got no request",
        ).toEqual([]);
        expect(report.timedOut, "ran out of time before sending every request").toBe(false);
        expect(
          summarizeFuzzReport({ ...report, routes: [] })
            .split("\n")
            .slice(1),
        ).toEqual([]);
      },
      options.timeoutMs ?? 60_000,
    );
  });
}
