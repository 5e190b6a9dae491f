import {
  challengeFuzzOptions,
  runOpenApiFuzz,
  startTestChallenge,
} from "@platform/challenge-sdk/testing";
import { challenge } from "../src/challenge.js";

// Every route of /openapi.json, sent generated valid and hostile requests (signed, with the
// token, and without): no 5xx, no stack trace, no internal path, no secret in any answer.
runOpenApiFuzz(challenge.slug, async () => {
  const t = await startTestChallenge(challenge, {
    env: { WORKER_ENABLED: "false", TASK_SEED: "7", TASK_CITIES: "8" },
  });
  return { ...challengeFuzzOptions(t), close: t.close };
});
