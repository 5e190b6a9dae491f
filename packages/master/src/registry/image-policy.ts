import { HttpError } from "@platform/core";

/** Which challenge images the registry accepts. */
export interface ImagePolicy {
  /** Image references must start with one of these (e.g. "ghcr.io/my-org/"); empty allows any. */
  allowedPrefixes: readonly string[];
  /** Require an explicit tag or digest (a bare name means a moving `latest`). */
  requireTagOrDigest: boolean;
  /** Refuse the `latest` tag, which can change under a running subnet. */
  forbidLatest: boolean;
}

/** The production policy: pinned images from ghcr.io only, unless the operator says otherwise. */
export const PRODUCTION_IMAGE_POLICY: ImagePolicy = {
  allowedPrefixes: ["ghcr.io/"],
  requireTagOrDigest: true,
  forbidLatest: true,
};

/** Split an image reference into name, tag and digest (registry ports are not tags). */
export function parseImageReference(image: string): {
  name: string;
  tag: string | null;
  digest: string | null;
} {
  const [withoutDigest, digest] = image.split("@", 2) as [string, string | undefined];
  const lastSlash = withoutDigest.lastIndexOf("/");
  const colon = withoutDigest.indexOf(":", lastSlash + 1);
  const name = colon === -1 ? withoutDigest : withoutDigest.slice(0, colon);
  const tag = colon === -1 ? null : withoutDigest.slice(colon + 1);
  return { name, tag, digest: digest ?? null };
}

const REFERENCE =
  /^[a-z0-9]+(?:[._-][a-z0-9]+)*(?::[0-9]+)?(?:\/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(?:@sha256:[0-9a-f]{64})?$/;

/** Check `image` against `policy`; throws 400 `image_not_allowed` with the reason. */
export function enforceImagePolicy(image: string, policy: ImagePolicy): void {
  const refuse = (reason: string) => {
    throw new HttpError(
      400,
      "image_not_allowed",
      `Image "${image}" fails the image policy: ${reason}`,
    );
  };
  if (!REFERENCE.test(image)) refuse("not a valid image reference");
  const { tag, digest } = parseImageReference(image);
  if (
    policy.allowedPrefixes.length &&
    !policy.allowedPrefixes.some((prefix) => image.startsWith(prefix))
  ) {
    refuse(`it must start with one of ${policy.allowedPrefixes.join(", ")}`);
  }
  if (policy.requireTagOrDigest && !tag && !digest) refuse("a tag or digest is required");
  if (policy.forbidLatest && tag === "latest" && !digest)
    refuse('the "latest" tag is not pinned; use a version tag or a digest');
}
