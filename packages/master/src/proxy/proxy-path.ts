import {
  proxySegmentKey,
  resolveProxyPath,
  splitProxyTarget,
} from "@platform/challenge-sdk/proxy-contract";
import { HttpError, isSlug } from "@platform/core";

/**
 * The passthrough's request target: the decoding, dot-segment resolution and folding are the
 * SDK's proxy contract (`resolveProxyPath`, `proxySegmentKey`), so the path a challenge author's
 * `isBlockedProxyPath` judges is the path this proxy judges. Only the wire form is made here.
 */

/** Where a passthrough request goes: its challenge, the normalised path below it, its query. */
export interface ProxyTarget {
  slug: string;
  /** The normalised path below the challenge root, percent-encoded for the wire ("/" at least). */
  path: string;
  /**
   * The segments of `path`, decoded, folded (NFKC, lower case) and without `;params` or trailing
   * dots and spaces: what the block rules judge.
   */
  segments: string[];
  /** The query exactly as the client sent it, with its "?" ("" when there is none). */
  query: string;
}

// RFC 3986 pchar minus pct-encoded: the bytes a path segment may carry unencoded.
const SEGMENT_SAFE = /^[A-Za-z0-9\-._~!$&'()*+,;=:@]$/;

/** Percent-encode one decoded segment for the wire (UTF-8, upper-case hex). */
export function encodeSegment(segment: string): string {
  let out = "";
  for (const char of segment) {
    if (SEGMENT_SAFE.test(char)) {
      out += char;
      continue;
    }
    for (const byte of Buffer.from(char, "utf8"))
      out += `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

/**
 * Parse a passthrough request target (`/challenges/{slug}/{path}?{query}`, as the client sent
 * it) into the challenge and the normalised path below it. The prefix is read from the same
 * decoded spelling as the rest, and `..` never climbs out of the challenge root, so the path
 * that is judged is the path that is forwarded. Throws 400 `invalid_path` for a target that
 * cannot be judged and 404 `challenge_not_found` for a segment that cannot be a slug.
 */
export function parseProxyTarget(target: string): ProxyTarget {
  if (!target.startsWith("/"))
    throw new HttpError(400, "invalid_path", "The request target must be a path");
  const { path: rawPath, query } = splitProxyTarget(target);
  const { segments, trailingSlash } = resolveProxyPath(rawPath, 2);
  const [prefix, slug, ...rest] = segments;
  if (prefix !== "challenges" || slug === undefined) {
    throw new HttpError(400, "invalid_path", "Address a challenge as /challenges/{slug}/{path}");
  }
  if (!isSlug(slug))
    throw new HttpError(404, "challenge_not_found", "No active challenge with that slug");
  const encoded = rest.map(encodeSegment).join("/");
  return {
    slug,
    path: `/${encoded}${trailingSlash && rest.length > 0 ? "/" : ""}`,
    segments: rest.map(proxySegmentKey),
    query,
  };
}
