// Every route of /openapi.json, sent generated valid and hostile requests (signed, with the
// token, and without): no 5xx, no stack trace, no internal path, no secret in any answer.
import { challengeFuzzOptions, runOpenApiFuzz } from "@platform/challenge-sdk/testing";
import { startAgentEval } from "./agent-eval-kit.js";

runOpenApiFuzz("agent-eval", async () => {
  const t = await startAgentEval("pglite");
  return { ...challengeFuzzOptions(t), close: t.close };
});
