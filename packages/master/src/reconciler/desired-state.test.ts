import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { ChallengeRow } from "../registry/challenge-row.js";
import { containerSpec, desiredOf, isManaged, isPinned, specHash } from "./desired-state.js";

const key = randomBytes(32);
const row = (extra: Partial<ChallengeRow> = {}) =>
  ({
    slug: "s",
    name: "S",
    status: "active",
    image: "ghcr.io/o/s:1",
    emission_percent: 10,
    resources: { cpus: 1, memory_mb: 256 },
    volumes: { data: "/data" },
    env: { A: "1", B: "2" },
    secrets: { KEY: "hunter2" },
    metadata: { port: 8000 },
    challenge_token_salt: "c",
    broker_token_salt: "b",
    ...extra,
  }) as ChallengeRow;
const hash = (r: ChallengeRow, pin = "sha256:".padEnd(71, "a")) =>
  specHash(containerSpec(r, pin), key);

describe("the desired state of a challenge", () => {
  it("runs active challenges only, and none whose metadata says managed: false", () => {
    expect(
      ["active", "inactive", "disabled", "draft"].map((status) =>
        desiredOf(row({ status } as Partial<ChallengeRow>)),
      ),
    ).toEqual(["running", "stopped", "stopped", "stopped"]);
    expect(isManaged(row())).toBe(true);
    expect(isManaged(row({ metadata: { managed: false } }))).toBe(false);
  });

  it("fingerprints what a container is built from, in any key order, and nothing else", () => {
    const base = hash(row());
    expect(hash(row({ env: { B: "2", A: "1" } }))).toBe(base);
    expect(hash(row({ name: "renamed", emission_percent: 50, description: "x" }))).toBe(base);
    for (const change of [
      { env: { A: "1", B: "3" } },
      { secrets: { KEY: "hunter3" } },
      { resources: { cpus: 2, memory_mb: 256 } },
      { volumes: { data: "/other" } },
      { metadata: { port: 9000 } },
      { challenge_token_salt: "rotated" },
      { broker_token_salt: "rotated" },
    ] as Partial<ChallengeRow>[])
      expect(hash(row(change)), JSON.stringify(change)).not.toBe(base);
    expect(hash(row(), "sha256:".padEnd(71, "b"))).not.toBe(base);
    // Keyed by the master key: a guess at a short secret cannot be checked against the label.
    expect(specHash(containerSpec(row(), "x"), randomBytes(32))).not.toBe(
      specHash(containerSpec(row(), "x"), key),
    );
  });

  it("knows a reference pinned to content", () => {
    const digest = "a".repeat(64);
    expect(isPinned(`ghcr.io/o/s@sha256:${digest}`)).toBe(true);
    expect(isPinned(`sha256:${digest}`)).toBe(true);
    expect(isPinned("ghcr.io/o/s:1")).toBe(false);
    expect(isPinned("ghcr.io/o/s@sha256:short")).toBe(false);
  });
});
