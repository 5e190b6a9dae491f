// Which raw request targets the app kit would hand to the passthrough route, decided without
// the kit: the native passthrough takes exactly those (and of those only the ones the route
// would forward), so a request answers the same whichever of the two serves it.
//
// The kit's path to the route, step by step (core's node adapter, then createApp on itty-router):
// 1. the target gets a leading "/" if it has none, and is parsed as a WHATWG URL (dot segments,
//    `%2e` and `\` resolved; nothing else decoded) that fetch's Request must accept;
// 2. itty-router matches the URL's pathname against the routes in registration order. Nothing
//    registered before the passthrough lives under /challenges, and its two patterns,
//    `/challenges/:slug` and `/challenges/:slug/:path+`, together match exactly the pathnames
//    that start with "/challenges/" followed by a character other than "/";
// 3. the kit percent-decodes every route parameter and answers 422 when one is malformed
//    (`%ff`, `%zz`). The parameters are the pathname after "/challenges/" cut at a "/", and
//    a "/" never sits inside an escape, so decoding that whole remainder fails exactly when
//    decoding one of them does.
// Anything else (another route, the kit's 404 or 422) stays with the kit.

const PREFIX = "/challenges/";
// Only the WHATWG parser removes these from a target; one of them hidden in "challenges" still
// has to reach the URL parse below.
const STRIPPED_BY_URL_PARSER = /[\t\n\r]/;
// The origin is irrelevant to the pathname of a target starting with "/" ("//host/x" carries
// its own): only the scheme matters, and the adapter's is http.
const ANY_ORIGIN = "http://localhost";

/** True when the app kit would route the request target `rawTarget` to the passthrough. */
export function kitRoutesToPassthrough(rawTarget: string): boolean {
  // Cheap refusal for most of what is not a passthrough: its pathname cannot hold the prefix.
  if (!rawTarget.includes("challenges") && !STRIPPED_BY_URL_PARSER.test(rawTarget)) return false;
  const target = rawTarget.startsWith("/") ? rawTarget : `/${rawTarget}`;
  let url: URL;
  try {
    url = new URL(target, ANY_ORIGIN);
  } catch {
    return false; // the kit fails on it too, its own way
  }
  // "//user:pw@host/challenges/..." parses, but fetch's Request refuses credentials in a URL.
  if (url.username || url.password) return false;
  const pathname = url.pathname;
  if (!pathname.startsWith(PREFIX) || pathname.length === PREFIX.length) return false;
  if (pathname[PREFIX.length] === "/") return false;
  try {
    decodeURIComponent(pathname.slice(PREFIX.length));
  } catch {
    return false; // the kit's 422
  }
  return true;
}
