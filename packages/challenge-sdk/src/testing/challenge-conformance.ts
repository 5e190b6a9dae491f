import { afterAll, beforeAll, describe, it } from "vitest";
import {
  type CheckContext,
  CONFORMANCE_CHECKS,
  resolveSubject,
  startSubject,
} from "./_conformance-checks.js";
import type {
  ConformanceInput,
  ConformanceOptions,
  ConformanceSubject,
} from "./check-challenge-conformance.js";

/**
 * Register the conformance suite every challenge runs on itself (vitest), one test per check:
 * /health, /version, /openapi.json, get_weights authentication and reply shape, the exact
 * FastAPI 422 shape, bearer on every internal route, bridge identity, and on signed routes an
 * unsigned request (401), a replayed nonce (409) and a tampered request (401). The same checks
 * run without vitest through `checkChallengeConformance`.
 * @example runChallengeConformance("echo", () => challenge, { backends: await testBackends() });
 */
export function runChallengeConformance<Cfg>(
  name: string,
  factory: ConformanceInput<Cfg>,
  options: ConformanceOptions = {},
): void {
  const backends = options.backends ?? ["pglite"];
  describe.each([...backends])(`${name} conforms to the challenge contract on %s`, (backend) => {
    let ctx: CheckContext | undefined;
    let close: (() => Promise<void>) | undefined;
    beforeAll(async () => {
      const started = await startSubject(
        (await resolveSubject(factory)) as ConformanceSubject,
        backend,
      );
      ctx = started.ctx;
      close = started.close;
    });
    afterAll(() => close?.());

    for (const check of CONFORMANCE_CHECKS) {
      it(check.title, async (test) => {
        if (!ctx) throw new Error("the challenge did not start (see the beforeAll error)");
        const outcome = await check.run(ctx);
        if (outcome) test.skip(outcome.skip);
      });
    }
  });
}
