import { Type } from "@sinclair/typebox";

/**
 * The spec's slug rule: lower-case letters, digits and inner hyphens, so at least two
 * characters. The one copy every boundary checks against (registry, proxy, signing, SDK, CLI).
 */
export const SLUG_PATTERN = "^[a-z0-9][a-z0-9-]*[a-z0-9]$";

/** Longest slug: a DNS label, because a slug names containers, volumes and hosts. */
export const SLUG_MAX_LENGTH = 63;

const SLUG = new RegExp(SLUG_PATTERN);

/**
 * True when `value` is a challenge slug ({@link SLUG_PATTERN}, at most 63 characters).
 * @example isSlug("my-challenge") // true; isSlug("a") and isSlug("-x") are false
 */
export function isSlug(value: unknown): value is string {
  return typeof value === "string" && value.length <= SLUG_MAX_LENGTH && SLUG.test(value);
}

/** Challenge slug as a TypeBox schema (path parameters and bodies): {@link isSlug}'s rule. */
export const Slug = Type.String({
  pattern: SLUG_PATTERN,
  minLength: 2,
  maxLength: SLUG_MAX_LENGTH,
  description: "lower-case letters, digits and inner hyphens",
});
