import {
  challengeFuzzOptions,
  runOpenApiFuzz,
  startTestChallenge,
} from "@platform/challenge-sdk/testing";
import { echoChallenge } from "./example-challenge.js";

// The example challenge fuzzed from its own /openapi.json. /v1/boom throws on purpose (it is
// how the tests show a 500 carries no internals), so it is the one route left out.
runOpenApiFuzz("echo-scores", async () => {
  const t = await startTestChallenge(echoChallenge, { env: { ECHO_MAX_SCORE: "100" } });
  return {
    ...challengeFuzzOptions(t, {
      exclude: ["GET /v1/boom"],
      secrets: ["run-token-0123456789", "hunter2"],
    }),
    close: t.close,
  };
});
