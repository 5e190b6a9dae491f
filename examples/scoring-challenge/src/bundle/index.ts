// The bundle stage: base64 -> ZIP -> checked files, every refusal a {code, message, status}.
export {
  type BundleError,
  type BundleErrorCode,
  type BundleResult,
  refuse,
} from "./bundle-error.js";
export {
  ALLOWED_EXTENSIONS,
  bundlePathProblem,
  MAX_PATH_CHARS,
  MAX_SEGMENT_CHARS,
  type PathProblem,
} from "./bundle-path.js";
export { decodeBase64Bundle, MAX_BASE64_CHARS } from "./decode-base64.js";
export { type Bundle, openBase64Bundle, openBundle, REQUIRED_FILES } from "./open-bundle.js";
export { type BundleFile, readBundleZip } from "./read-bundle-zip.js";
