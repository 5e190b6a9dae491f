/**
 * What a miner env may hold: its limits (the key pattern and count, which the schema checks),
 * then bytes, not characters, against the per-value and total caps, and nothing URL-shaped. The env reaches the
 * agent inside the evaluation; a URL in it could point the agent (or a tool it calls) away from
 * the evaluator's model endpoint, so keys that name a location and values that are one are
 * refused outright, with the key named (never the value) in the answer.
 */
import { HttpError } from "@platform/challenge-sdk";

/** Limits of a miner env: keys, one value, all values (bytes of UTF-8). */
export const MAX_ENV_KEYS = 64;
export const MAX_ENV_VALUE_BYTES = 16 * 1024;
export const MAX_ENV_TOTAL_BYTES = 128 * 1024;
export const ENV_KEY_PATTERN = "^[A-Za-z_][A-Za-z0-9_]{0,127}$";

export const ENV_ERROR_CODES = {
  /** 400: a key names a location (…_URL, …_HOST, …_PROXY, …) or a value is a URL or host. */
  urlNotAllowed: "env_url_not_allowed",
  /** 400: one value is over 16 KiB of UTF-8. */
  valueTooLarge: "env_value_too_large",
  /** 400: keys and values together are over 128 KiB of UTF-8. */
  tooLarge: "env_too_large",
  /** 409: the env was locked by launch; it never changes again. */
  locked: "env_locked",
  /** 412: launch before the env was set or confirmed empty. */
  notConfirmed: "env_not_confirmed",
} as const;

// Words of a key (split on "_") that make it a location. Whole words only: API_KEY_HOSTED is
// fine, MODEL_HOST is not.
const LOCATION_WORDS = new Set([
  "URL",
  "URLS",
  "URI",
  "URIS",
  "ENDPOINT",
  "ENDPOINTS",
  "HOST",
  "HOSTS",
  "HOSTNAME",
  "PROXY",
  "DOMAIN",
  "WEBHOOK",
  "SERVER",
]);

// Linear-time shapes, all anchored at the start (an unanchored pattern with a repeated class
// rescans from every position: quadratic on 16 KiB): a protocol-relative start, an IPv4
// address, a www. host, or a dotted host followed by a port or a path. "://" anywhere (any
// scheme) is a plain substring test.
const URL_SHAPES = [
  /^\s*\/\//,
  /^\s*(?:\d{1,3}\.){3}\d{1,3}(?::\d+)?(?:\/|\s*$)/,
  /^\s*www\./i,
  /^\s*(?:[A-Za-z0-9-]+\.)+[A-Za-z]{2,}(?::\d+|\/)/,
];

/** Whether a key names a location. */
export function isLocationKey(key: string): boolean {
  return key
    .toUpperCase()
    .split("_")
    .some((word) => LOCATION_WORDS.has(word));
}

/** Whether a value is, or starts with, a URL or a host. */
export function isUrlShaped(value: string): boolean {
  return value.includes("://") || URL_SHAPES.some((shape) => shape.test(value));
}

/** The env's byte sizes, or the 400 that refuses it. */
export function checkEnv(env: Record<string, string>): { totalBytes: number } {
  let totalBytes = 0;
  for (const [key, value] of Object.entries(env)) {
    if (isLocationKey(key) || isUrlShaped(value)) {
      throw new HttpError(
        400,
        ENV_ERROR_CODES.urlNotAllowed,
        `${key}: URL-shaped keys and values are not allowed (the evaluator gives the agent its model endpoint).`,
        { extra: { key } },
      );
    }
    const valueBytes = Buffer.byteLength(value, "utf8");
    if (valueBytes > MAX_ENV_VALUE_BYTES) {
      throw new HttpError(
        400,
        ENV_ERROR_CODES.valueTooLarge,
        `${key}: a value holds at most ${MAX_ENV_VALUE_BYTES} bytes of UTF-8.`,
        { extra: { key } },
      );
    }
    totalBytes += Buffer.byteLength(key, "utf8") + valueBytes;
  }
  if (totalBytes > MAX_ENV_TOTAL_BYTES) {
    throw new HttpError(
      400,
      ENV_ERROR_CODES.tooLarge,
      `The env holds at most ${MAX_ENV_TOTAL_BYTES} bytes of keys and values together.`,
    );
  }
  return { totalBytes };
}
