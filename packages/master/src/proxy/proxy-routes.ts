import type { MasterContext } from "../master-context.js";
import { masterCredentialCheck } from "./master-credential.js";
import { createNativePassthrough, type NativePassthrough } from "./native-passthrough.js";
import { NonceStore } from "./nonce-store.js";
import { registerPassthroughRoutes } from "./passthrough-route.js";
import { registerSignedUploadRoute } from "./signed-upload-route.js";
import { registerSubmissionStatusRoute } from "./submission-status-route.js";
import { UpstreamClient } from "./upstream-client.js";

const upstreams = new WeakMap<MasterContext, UpstreamClient>();

/** The proxy's client to challenges on a master (an update asks it what is still in flight). */
export function upstreamOf(context: MasterContext): UpstreamClient | undefined {
  return upstreams.get(context);
}

/**
 * Mount the master's public proxy: the passthrough to active challenges, the submission-status
 * read and the signed upload. One pooled undici client serves all three; the upload's nonce
 * reservations are pruned while the master listens, and both are closed with it. Returns the
 * node-native handlers of the upload and the passthrough, which the public listener runs in
 * front of the app (same answers, no web Request or Response per request).
 * @example serve(app.fetch, { nodeHandler: registerProxyRoutes(context) }) // in createMaster
 */
export function registerProxyRoutes(context: MasterContext): NativePassthrough {
  const { app, config, database, store, log, metrics } = context;
  const upstream = new UpstreamClient({
    timeoutMs: config.proxy.timeoutMs,
    log: log.child({ component: "proxy" }),
  });
  upstreams.set(context, upstream);
  const nonces = new NonceStore(database.sql, { log });
  const isMasterCredential = masterCredentialCheck(config.adminToken);
  // The specific routes first: /v1/challenges/... never reaches the passthrough, but reading
  // the registrations top-down should say so.
  registerSubmissionStatusRoute(app, { store, upstream, isMasterCredential, metrics });
  const upload = registerSignedUploadRoute(app, {
    store,
    upstream,
    metrics,
    nonces,
    uploadLimitBytes: config.proxy.uploadLimitBytes,
    verifyWorkers: config.proxy.verifyWorkers,
  });
  context.onListen(() => nonces.start());
  context.onClose(async () => {
    await nonces.stop();
    await upload.close();
    await upstream.close();
  });
  registerPassthroughRoutes(app, { store, upstream, isMasterCredential, metrics });
  const passthrough = createNativePassthrough({
    store,
    upstream,
    log,
    isMasterCredential,
    metrics,
  });
  return (req, res) => upload.native(req, res) || passthrough(req, res);
}
