import { describe, expect, it } from "vitest";
import { type DevReady, devBanner } from "./_dev-banner.js";

const challenge = (slug: string, notes: string[]) => ({
  slug,
  name: slug,
  version: "1.0.0",
  module: `/repo/examples/${slug}/src/challenge.ts`,
  proxy_url: `http://127.0.0.1:8080/challenges/${slug}`,
  internal_url: "http://127.0.0.1:40000",
  challenge_token: "ct_x",
  notes,
});

// Only the fields the banner reads about challenges matter here; the master's are placeholders.
const ready = (challenges: ReturnType<typeof challenge>[]) =>
  ({
    status: "ready",
    master_url: "http://127.0.0.1:8080",
    admin_url: "http://127.0.0.1:8081/admin",
    registry_url: "http://127.0.0.1:8080/v1/registry",
    weights_url: "http://127.0.0.1:8080/v1/weights/latest",
    dashboard_url: "http://127.0.0.1:8080/v1/challenges/dashboard.svg",
    admin_token: "adm_x",
    data_dir: "/repo/.platform/dev",
    chain: null,
    challenges,
  }) as DevReady;

describe("the dev banner", () => {
  it("prints each challenge's notes right under it, and nothing for one without", () => {
    const lines = devBanner(
      ready([
        challenge("scoring", ["no LLM configured: LLM_GATE=off", "no Docker engine answers"]),
        challenge("shortest-tour", []),
      ]),
      false,
    ).split("\n");
    const at = lines.findIndex((line) => line.startsWith("    scoring "));
    expect(lines.slice(at + 1, at + 4)).toEqual([
      "                   note: no LLM configured: LLM_GATE=off",
      "                   note: no Docker engine answers",
      expect.stringMatching(/^ {4}shortest-tour {2}http/),
    ]);
    expect(lines[at + 4]).not.toContain("note:");
  });

  it("prints the local chain and where the master's weights on chain are, only when it runs one", () => {
    const withChain = devBanner(
      {
        ...ready([challenge("scoring", [])]),
        chain: {
          url: "ws://127.0.0.1:40001",
          netuid: 1,
          runtime: "spec424",
          validator_hotkey: "5Validator",
          commit_reveal: true,
          weights_url: "http://127.0.0.1:8080/v1/weights/chain",
        },
      },
      false,
    );
    expect(withChain).toContain(
      "  chain        ws://127.0.0.1:40001  (local subtensor, finney spec424 runtime, netuid 1, commit-reveal on: weights are committed, then revealed an epoch later)",
    );
    expect(withChain).toContain(
      "  on chain     http://127.0.0.1:8080/v1/weights/chain  (the master's validator 5Validator; miners who score get a uid)",
    );
    expect(devBanner(ready([challenge("scoring", [])]), false)).not.toContain("local subtensor");
  });
});
