import { describe, expect, it } from "vitest";
import { enforceImagePolicy, type ImagePolicy, PRODUCTION_IMAGE_POLICY } from "./image-policy.js";

/** Matches the 400 `image_not_allowed` HttpError, its message containing `text`. */
const notAllowed = (text = "") =>
  expect.objectContaining({
    status: 400,
    code: "image_not_allowed",
    message: expect.stringContaining(text),
  });

describe("enforceImagePolicy: the registry's policy", () => {
  it("accepts pinned images under an allowed prefix", () => {
    expect(() =>
      enforceImagePolicy("ghcr.io/org/challenge:1.2.0", PRODUCTION_IMAGE_POLICY),
    ).not.toThrow();
    expect(() =>
      enforceImagePolicy(`ghcr.io/org/challenge@sha256:${"a".repeat(64)}`, PRODUCTION_IMAGE_POLICY),
    ).not.toThrow();
  });

  it.each([
    ["outside the prefixes", "docker.io/org/challenge:1"],
    ["without a tag or digest", "ghcr.io/org/challenge"],
    ["on latest", "ghcr.io/org/challenge:latest"],
    ["not a reference", "ghcr.io/org/Challenge:1"],
  ])("refuses an image %s (400 image_not_allowed)", (_what, image) => {
    expect(() => enforceImagePolicy(image, PRODUCTION_IMAGE_POLICY)).toThrow(notAllowed());
  });

  it("allows any image when no prefix is listed, unless the policy refuses all then", () => {
    const open: ImagePolicy = {
      allowedPrefixes: [],
      requireTagOrDigest: false,
      forbidLatest: false,
    };
    expect(() => enforceImagePolicy("alpine:3", open)).not.toThrow();
    expect(() => enforceImagePolicy("alpine:3", { ...open, allowedPrefixes: [""] })).not.toThrow();
    const closed = { ...open, whenNoPrefixes: "refuse-all", setting: "X_IMAGES" } as const;
    expect(() => enforceImagePolicy("alpine:3", closed)).toThrow(notAllowed("X_IMAGES"));
  });
});

describe("enforceImagePolicy: prefix boundaries", () => {
  const policy: ImagePolicy = {
    allowedPrefixes: ["platform-test/busybox"],
    requireTagOrDigest: false,
    forbidLatest: false,
  };

  it.each([
    "platform-test/busybox-evil:1",
    "platform-test/busyboxx",
    "platform-test/busybox_evil",
    "platform-test/busybox.evil:1",
  ])("a prefix does not admit a longer name: %s", (image) => {
    expect(() => enforceImagePolicy(image, policy)).toThrow(notAllowed("must start with"));
  });

  it.each([
    "platform-test/busybox",
    "platform-test/busybox:1",
    `platform-test/busybox@sha256:${"a".repeat(64)}`,
    "platform-test/busybox/sub:1",
  ])("a prefix admits its own name at a boundary: %s", (image) => {
    expect(() => enforceImagePolicy(image, policy)).not.toThrow();
  });

  it("a prefix ending in a boundary character matches anything under it", () => {
    const org = { ...policy, allowedPrefixes: ["ghcr.io/org/"] };
    expect(() => enforceImagePolicy("ghcr.io/org/anything-at-all:1", org)).not.toThrow();
    expect(() => enforceImagePolicy("ghcr.io/organisation-evil/x:1", org)).toThrow(notAllowed());
  });
});
