/**
 * Checks both reference workers (review and eval) apply to their environment, so a bad variable
 * is named the same way by each: an http(s) URL without query, fragment or credentials, and the
 * sha256 of the worker's own bundle (what "this image" is when nobody says otherwise).
 */
import { readFileSync } from "node:fs";
import { sha256Hex } from "./crypto/index.js";

/**
 * `value` as an http(s) URL without a trailing slash, or null with the problem added to
 * `problems` (never the value: it may carry a secret). Empty is a problem only when `required`.
 */
export function httpUrl(
  value: string | undefined,
  name: string,
  problems: string[],
  required: boolean,
): string | null {
  const text = value?.trim() ?? "";
  if (text === "") {
    if (required) problems.push(`${name} is required`);
    return null;
  }
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    problems.push(`${name} is not a URL`);
    return null;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    problems.push(`${name} must be http or https`);
    return null;
  }
  if (url.search !== "" || url.hash !== "" || url.username !== "" || url.password !== "") {
    problems.push(`${name} must carry no query, fragment or credentials`);
    return null;
  }
  return url.href.replace(/\/+$/, "");
}

/** `sha256:<hex>` of `file` (the worker's bundle), or "" when it cannot be read. */
export function ownDigest(file: string): string {
  try {
    return `sha256:${sha256Hex(readFileSync(file))}`;
  } catch {
    return "";
  }
}
