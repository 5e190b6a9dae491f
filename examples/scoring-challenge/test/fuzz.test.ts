// Every route of /openapi.json, sent generated valid and hostile requests (signed, with the
// token, and without): no 5xx, no stack trace, no internal path, no secret in any answer. No
// worker and no executor: the suite probes the routes, nothing is evaluated (process-next answers
// its documented 503 executor_unavailable when a generated submission is pending).
import { challengeFuzzOptions, runOpenApiFuzz } from "@platform/challenge-sdk/testing";
import { startScoring } from "./scoring-test-kit.js";

runOpenApiFuzz("scoring", async () => {
  const t = await startScoring("pglite", {
    EXECUTOR: "broker",
    PLATFORM_MASTER_URL: "http://127.0.0.1:9",
    BROKER_TOKEN: "broker-token-for-the-fuzz-suite",
  });
  return { ...challengeFuzzOptions(t), close: t.close };
});
