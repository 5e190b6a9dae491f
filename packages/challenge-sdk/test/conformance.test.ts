import { defineChallenge, Type } from "@platform/challenge-sdk";
import { runChallengeConformance } from "@platform/challenge-sdk/testing";
import { testBackends } from "@platform/core/testing";
import { echoChallenge } from "./example-challenge.js";

// The example challenge, probed automatically (its signed JSON route gives the 422).
runChallengeConformance(
  "echo-scores",
  () => ({ challenge: echoChallenge, env: { ECHO_MAX_SCORE: "100" } }),
  {
    backends: await testBackends(),
  },
);

// A challenge with no signed route names its own invalid request.
const minimal = defineChallenge({
  slug: "minimal",
  version: "0.0.1",
  weights: () => ({ epoch: 0, weights: { "5DfhGyQdFobKM8NsWvEeAKk5EQQgYe9AydgJ7rMB6E1EqRzV": 2 } }),
  routes: (router) =>
    router.public({
      method: "GET",
      path: "/v1/items",
      query: Type.Object({ limit: Type.Integer({ maximum: 10 }) }),
      handler: ({ query }) => ({ limit: query.limit }),
    }),
});
runChallengeConformance("minimal", () => ({
  challenge: minimal,
  invalidRequest: { method: "GET", path: "/v1/items?limit=11" },
}));
