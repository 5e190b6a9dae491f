// The bundle stage: the archive the SDK reads (base64 -> ZIP -> files) and the bundle's own
// checks on it (text, the contract's files), every refusal a {code, message, status}.
export { BUNDLE_ARCHIVE, MAX_BASE64_CHARS, MAX_ZIP_BYTES } from "./bundle-archive.js";
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
export { type Bundle, bundleFromArchive, openBundle, REQUIRED_FILES } from "./open-bundle.js";
export { type BundleFile, readBundleZip } from "./read-bundle-zip.js";
