// The SDK's conformance suite, run by the agent-eval challenge on itself on every backend: health,
// version, OpenAPI, get_weights auth and shape, internal and bridge auth, the 422 shape, and the
// signed submit's replay and tamper checks.
import { runChallengeConformance, testBackends } from "@platform/challenge-sdk/testing";
import { afterAll } from "vitest";
import { challenge } from "../src/challenge.js";
import { secretKeyFile } from "./agent-eval-kit.js";

const key = secretKeyFile();
afterAll(() => key.remove());

runChallengeConformance(
  "agent-eval",
  () => ({ challenge, env: { SECRET_KEY_FILE: key.path, ATTESTATION_VERIFIER: "dev" } }),
  { backends: await testBackends() },
);
