// Against the real engine: an image it has, one it lacks, and an engine that is not there.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { probeDocker } from "@platform/challenge-sdk/sandbox";
import { isCi } from "@platform/core/testing";
import Docker from "dockerode";
import { describe, expect, it } from "vitest";
import { dockerNotes, dockerProbe, shellPath } from "./_dev-docker-check.js";

// Built by .ci/test-images.sh, as the broker suites use it.
const PRESENT = "platform-test/busybox:1";
const ABSENT = "platform-test/never-built-by-anyone:1";

const engine = await probeDocker(new Docker());
if (!engine.ok && isCi()) throw new Error(`CI but no Docker engine answers: ${engine.reason}`);
if (!engine.ok)
  console.warn(`!! dev Docker checks against a real engine SKIPPED: ${engine.reason}`);
const present =
  engine.ok &&
  (await new Docker()
    .getImage(PRESENT)
    .inspect()
    .then(
      () => true,
      () => false,
    ));
if (engine.ok && !present && isCi()) throw new Error(`CI but ${PRESENT} is missing`);

const project = "/work/repo/examples/eval";
const needs = (images: { image: string; env?: string; build?: string }[]) => ({
  note: "work waits for one",
  images: images.map((item) => ({ env: null, build: null, ...item })),
});

describe("what dev says about the Docker engine", () => {
  it.skipIf(!present)("nothing when the engine answers and has every image", async () => {
    const notes = await dockerNotes(needs([{ image: PRESENT, build: "make" }]), {
      probe: dockerProbe(),
      env: {},
      projectDir: project,
      cwd: "/work/repo",
    });
    expect(notes).toEqual([]);
  });

  it.skipIf(!engine.ok)(
    "a missing image with the one command that builds it, from where dev runs",
    async () => {
      const probe = dockerProbe();
      const options = { probe, env: {}, projectDir: project };
      const wanted = needs([
        { image: ABSENT, env: "EVAL_IMAGE", build: "bash {project}/build.sh" },
      ]);
      expect(await dockerNotes(wanted, { ...options, cwd: "/work/repo" })).toEqual([
        `the image ${ABSENT} is missing; build it with: bash examples/eval/build.sh`,
      ]);
      expect(await dockerNotes(wanted, { ...options, cwd: project })).toEqual([
        `the image ${ABSENT} is missing; build it with: bash ./build.sh`,
      ]);
      // The user's own image: the project's command builds the default, so it is not offered.
      const own = `${ABSENT}-mine`;
      expect(
        await dockerNotes(wanted, { ...options, env: { EVAL_IMAGE: own }, cwd: "/work/repo" }),
      ).toEqual([`the image ${own} is not on the Docker engine`]);
    },
  );

  it("no engine: says so, why, and what the challenge does meanwhile; no image is asked about", async () => {
    const socketPath = join(mkdtempSync(join(tmpdir(), "cli-no-docker-")), "docker.sock");
    const probe = dockerProbe({ docker: new Docker({ socketPath }) });
    const notes = await dockerNotes(needs([{ image: PRESENT, build: "make" }]), {
      probe,
      env: {},
      projectDir: project,
      cwd: "/work/repo",
    });
    expect(notes).toHaveLength(1);
    expect(notes[0]).toMatch(/^no Docker engine answers \(.*ENOENT.*\): work waits for one$/);
  });
});

describe("a folder as the user types it", () => {
  it("relative inside the current folder, absolute outside it, quoted when the shell needs it", () => {
    expect(shellPath("/a/b/c", "/a")).toBe("b/c");
    expect(shellPath("/a", "/a")).toBe(".");
    expect(shellPath("/x/y", "/a/b")).toBe("/x/y");
    expect(shellPath("/a/my dir", "/a")).toBe("'my dir'");
    expect(shellPath("/a/it's", "/a")).toBe(`'it'\\''s'`);
  });
});
