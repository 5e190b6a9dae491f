// What a signed upload must pass, shared by the kit's route (signed-upload-route.ts) and the
// native one (native-signed-upload.ts): the prechecks before the body is read, then the
// signature, the active challenge and the nonce, and the bridge headers it is forwarded with.
import {
  HttpError,
  initCrypto,
  isSlug,
  type Logger,
  requireMediaType,
  SIGNATURE_HEADERS,
  type SignedRequestErrorCode,
  signedRequestStatus,
} from "@platform/core";
import { activeUpstream, noActiveChallenge } from "./_active-upstream.js";
import type { ProxyObservation } from "./_proxy-observation.js";
import { createSignatureVerifier, type SignatureVerifier } from "./_signature-verifier.js";
import {
  bridgeRequestHeaders,
  type ForwardIdentity,
  type RequestHeaderReader,
} from "./forward-headers.js";
import type { NonceStore } from "./nonce-store.js";
import type { ProxyDependencies } from "./passthrough-route.js";

/** The challenge route a verified upload is forwarded to. */
export const BRIDGE_PATH = "/internal/v1/bridge/submissions";

/** Media types a submission upload may have (forwarded as sent). */
export const UPLOAD_MEDIA_TYPES: readonly string[] = ["application/zip", "application/json"];

/** What the signed upload route needs beyond the passthrough's dependencies. */
export interface SignedUploadDependencies extends ProxyDependencies {
  nonces: NonceStore;
  /** Body cap in bytes (413 past it). */
  uploadLimitBytes: number;
  /**
   * Worker threads that check upload signatures off the event loop (core's `createVerifyPool`);
   * 0 or absent verifies on the main thread. Measured in docs/performance.md
   * (`signed-upload-pool`): opt-in, as it does not pay on two cores.
   */
  verifyWorkers?: number;
}

// A plain file name: no separator, no leading dot (so never `.` or `..`), no control character.
const FILENAME = /^[A-Za-z0-9_](?:[A-Za-z0-9._ ()+-]{0,253}[A-Za-z0-9._()+-])?$/;

/** True when `name` is a plain file name the master forwards as X-Submission-Filename. */
export function isPlainFilename(name: string): boolean {
  return FILENAME.test(name);
}

function filenameOf(url: Pick<URL, "searchParams">): string | undefined {
  // Only the signed query names the file: everything forwarded as the miner's must be signed,
  // and an X-Submission-Filename header is not, so it is ignored (the bridge headers never copy
  // it). A repeated `filename` never gets here: signed routes refuse repeated query keys.
  const name = url.searchParams.get("filename");
  if (name === null) return undefined;
  if (!isPlainFilename(name)) {
    throw new HttpError(
      400,
      "invalid_filename",
      "The submission file name must be a plain file name",
    );
  }
  return name;
}

function signatureRefused(code: SignedRequestErrorCode, message: string): HttpError {
  return new HttpError(signedRequestStatus(code), code, message);
}

/**
 * Everything refused before the body is read: slug, signature headers present, media type and
 * file name. Returns the file name to forward, if any. Reads only `request.headers.get`.
 */
export function precheck(
  request: { headers: Pick<Headers, "get"> },
  url: Pick<URL, "searchParams">,
  slug: string,
): string | undefined {
  if (!isSlug(slug)) throw noActiveChallenge(slug);
  const missing = Object.values(SIGNATURE_HEADERS).filter((name) => !request.headers.get(name));
  if (missing.length) {
    throw signatureRefused("missing_signature_headers", `Missing header(s): ${missing.join(", ")}`);
  }
  requireMediaType(request as unknown as Request, UPLOAD_MEDIA_TYPES);
  return filenameOf(url);
}

/** One upload, read in full, as both ways in hand it to {@link admitUpload}. */
export interface UploadToAdmit {
  /** The request's headers (a web Headers or the raw ones: only `get` is read). */
  headers: RequestHeaderReader;
  /** The request target exactly as received: what the miner signed. */
  rawTarget: string;
  body: Uint8Array;
  slug: string;
  filename: string | undefined;
  identity: ForwardIdentity;
  /** Told the slug once the challenge is found active (its metrics label). */
  observation?: ProxyObservation;
}

/** An admitted upload: where it goes and the headers it goes with. */
export interface AdmittedUpload {
  base: URL;
  headers: Record<string, string>;
  /** What the route logs (no secret). */
  logFields: Record<string, unknown>;
}

/** The route's verifier: crypto initialised once, signatures on the pool when configured. */
export interface UploadVerifier extends SignatureVerifier {
  ready: Promise<void>;
}

export function createUploadVerifier(deps: SignedUploadDependencies, log: Logger): UploadVerifier {
  const ready = initCrypto();
  ready.catch(() => {}); // surfaced by the first upload that awaits it
  return Object.assign(createSignatureVerifier(deps.verifyWorkers ?? 0, log), { ready });
}

/**
 * The checks after the body is read, in order: the signature over method, path as received,
 * exact body and slug (401 with the verifier's code); the challenge active (404, 502 without
 * an address); (hotkey, nonce) reserved atomically (409 `nonce_reused`). Returns where the
 * upload goes and the bridge headers, or throws the HttpError to answer.
 */
export async function admitUpload(
  deps: SignedUploadDependencies,
  verify: UploadVerifier,
  upload: UploadToAdmit,
): Promise<AdmittedUpload> {
  const { slug } = upload;
  await verify.ready;
  const verified = await verify.check({
    headers: upload.headers,
    method: "POST",
    pathWithQuery: upload.rawTarget,
    body: upload.body,
    slug,
  });
  if (!verified.ok) throw signatureRefused(verified.code, verified.message);

  const { row, base } = await activeUpstream(deps.store, slug);
  upload.observation?.known(slug);
  if (!(await deps.nonces.reserve(verified.hotkey, verified.nonce))) {
    throw new HttpError(
      409,
      "nonce_reused",
      "This nonce was already used by this hotkey; sign again with a new nonce",
    );
  }
  const headers = bridgeRequestHeaders(upload.headers, upload.identity, {
    token: deps.store.challengeToken(row),
    hotkey: verified.hotkey,
    nonce: verified.nonce,
    requestHash: verified.requestHash,
    filename: upload.filename,
  });
  // Tracing on: the challenge's bridge handler continues this upload's trace.
  upload.observation?.inject(headers);
  const logFields = { slug, hotkey: verified.hotkey, bytes: upload.body.byteLength };
  return { base, headers, logFields };
}
