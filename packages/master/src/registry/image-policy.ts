import { HttpError } from "@platform/core";

/**
 * Which images are accepted: the one validator of image references, used by the registry (a
 * challenge's image) and the broker (a workload's image) with their own policies.
 */
export interface ImagePolicy {
  /** Image references must start with one of these (e.g. "ghcr.io/my-org/"); "" never matches. */
  allowedPrefixes: readonly string[];
  /**
   * What an empty `allowedPrefixes` allows: any image (the default, the registry's) or none
   * (the broker's: a workload runs only images an operator listed).
   */
  whenNoPrefixes?: "allow-any" | "refuse-all";
  /** The setting that lists the prefixes, named in a refusal so the operator knows what to set. */
  setting?: string;
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

const BOUNDARY = new Set(["/", ":", "@"]);

/** `image` starts with `prefix` and the prefix ends at a name boundary. */
function matchesPrefix(image: string, prefix: string): boolean {
  if (!image.startsWith(prefix)) return false;
  if (image.length === prefix.length || BOUNDARY.has(prefix.at(-1) ?? "")) return true;
  return BOUNDARY.has(image[prefix.length] ?? "");
}

const REFERENCE =
  /^[a-z0-9]+(?:[._-][a-z0-9]+)*(?::[0-9]+)?(?:\/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(?:@sha256:[0-9a-f]{64})?$/;

/**
 * Check `image` against `policy`; throws 400 `image_not_allowed` with the reason. Prefixes are
 * matched against the reference as sent (Docker reads "a/b:1" and "docker.io/a/b:1" alike) and
 * only at a boundary: a prefix matches where it ends, or where the image goes on with "/", ":"
 * or "@", so "ghcr.io/org" never allows "ghcr.io/organisation-evil/…".
 * @example enforceImagePolicy("ghcr.io/org/eval:1", { allowedPrefixes: ["ghcr.io/org/"], requireTagOrDigest: true, forbidLatest: true })
 */
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
  const prefixes = policy.allowedPrefixes.filter((prefix) => prefix !== "");
  if (prefixes.length === 0) {
    if (policy.whenNoPrefixes === "refuse-all") {
      refuse(
        policy.setting
          ? `no image is allowed until prefixes are listed in ${policy.setting}`
          : "no image prefix is allowed",
      );
    }
  } else if (!prefixes.some((prefix) => matchesPrefix(image, prefix))) {
    const where = policy.setting ? ` (set by ${policy.setting})` : "";
    refuse(`it must start with one of ${prefixes.join(", ")}${where}`);
  }
  if (policy.requireTagOrDigest && !tag && !digest) refuse("a tag or digest is required");
  if (policy.forbidLatest && tag === "latest" && !digest)
    refuse('the "latest" tag is not pinned; use a version tag or a digest');
}
