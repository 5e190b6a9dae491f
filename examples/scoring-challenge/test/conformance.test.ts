// The SDK's conformance suite, run by the scoring challenge on itself on every backend: health,
// version, OpenAPI, get_weights auth and shape, internal and bridge auth, the 422 shape, and
// the signed submit's replay and tamper checks.
import { runChallengeConformance, testBackends } from "@platform/challenge-sdk/testing";
import { challenge } from "../src/challenge.js";

runChallengeConformance(
  "scoring",
  () => ({
    challenge,
    // No worker and no executor: the suite probes routes, nothing is evaluated.
    env: {
      WORKER_ENABLED: "false",
      LLM_GATE: "off",
      PLATFORM_MASTER_URL: "http://127.0.0.1:9",
      BROKER_TOKEN: "broker-token-for-the-tests",
    },
  }),
  { backends: await testBackends() },
);
