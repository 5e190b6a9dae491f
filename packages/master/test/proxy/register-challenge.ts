import { jsonInit, type TestMaster } from "../test-master.js";

/** Register a challenge through the admin API; returns the clear challenge token. */
export async function registerChallenge(
  t: TestMaster,
  slug: string,
  status: "active" | "inactive" | "disabled" | "draft",
  internalBaseUrl?: string,
): Promise<string> {
  const body: Record<string, unknown> = {
    slug,
    name: slug,
    image: "ghcr.io/org/c:1.0",
    version: "1.0",
    status,
  };
  if (internalBaseUrl !== undefined) body.internal_base_url = internalBaseUrl;
  const res = await t.fetch("/v1/admin/challenges", jsonInit("POST", body, t.admin));
  if (res.status !== 201) throw new Error(`registering ${slug}: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { challenge_token: string }).challenge_token;
}
