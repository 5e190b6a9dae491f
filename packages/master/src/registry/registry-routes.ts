import { type App, RegistryResponse } from "@platform/core";
import type { ChallengeStore } from "./challenge-store.js";
import { toRegistryChallenge } from "./challenge-views.js";

/** What the public registry says about the network. */
export interface RegistryIdentity {
  network: string;
  apiVersion: string;
  masterUid: number;
}

/** Mount GET /v1/registry: every challenge but drafts, with no secret in it. */
export function registerRegistryRoutes(
  app: App,
  store: ChallengeStore,
  identity: RegistryIdentity,
): void {
  app.route({
    method: "GET",
    path: "/v1/registry",
    summary: "The public registry of challenges (drafts excluded)",
    tags: ["public"],
    responses: { 200: { description: "OK", schema: RegistryResponse } },
    handler: async () => ({
      network: identity.network,
      api_version: identity.apiVersion,
      master_uid: identity.masterUid,
      challenges: (await store.list(["active", "inactive", "disabled"])).map(toRegistryChallenge),
    }),
  });
}
