// Every route of /openapi.json, sent generated valid and hostile requests (signed, with the
// token, and without): no 5xx, no stack trace, no internal path, no secret in any answer.
// This service has ~30 routes and signs most requests (sr25519): under a full test run on two
// cores that takes longer than the fuzzer's default 20 s, so it gets 60 s (and the test 90 s).
import { challengeFuzzOptions, runOpenApiFuzz } from "@platform/challenge-sdk/testing";
import { startAgentEval } from "./agent-eval-kit.js";

runOpenApiFuzz(
  "agent-eval",
  async () => {
    const t = await startAgentEval("pglite");
    return { ...challengeFuzzOptions(t), timeLimitMs: 60_000, close: t.close };
  },
  { timeoutMs: 90_000 },
);
