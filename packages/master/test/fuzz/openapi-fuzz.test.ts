// The master fuzzed from each listener's own /openapi.json over real sockets: the public one as
// an outsider, the admin one with and without the admin and broker credentials. One active
// challenge is proxied to an echo upstream so the proxy's routes reach a real upstream.
import { type FuzzTarget, runOpenApiFuzz } from "@platform/challenge-sdk/testing";
import { type EchoUpstream, startEchoUpstream } from "../proxy/echo-upstream.js";
import { jsonInit, startTestMaster, type TestMaster } from "../test-master.js";

interface Started {
  t: TestMaster;
  upstream: EchoUpstream;
  publicUrl: string;
  adminUrl: string;
  secrets: string[];
  brokerToken: string;
}

let started: Promise<Started> | undefined;
const start = () =>
  (started ??= (async () => {
    const upstream = await startEchoUpstream();
    const t = await startTestMaster("pglite", (config) => {
      config.broker.allowedImagePrefixes = ["platform-test/"];
      config.broker.reaperIntervalSeconds = 0;
      // On, so its admin routes are fuzzed too; the fuzz challenge is run elsewhere (unmanaged).
      config.reconciler.enabled = true;
    });
    const res = await t.fetch(
      "/v1/admin/challenges",
      jsonInit(
        "POST",
        {
          slug: "fuzz",
          name: "fuzz",
          image: "ghcr.io/org/fuzz:1.0",
          version: "1.0",
          status: "active",
          internal_base_url: upstream.url,
          metadata: { managed: false },
        },
        t.admin,
      ),
    );
    if (res.status !== 201) throw new Error(`registering: ${res.status} ${await res.text()}`);
    const tokens = (await res.json()) as { challenge_token: string; docker_broker_token: string };
    const server = await t.listen();
    return {
      t,
      upstream,
      publicUrl: server.url,
      adminUrl: server.admin.url,
      secrets: [t.adminToken, tokens.challenge_token, tokens.docker_broker_token],
      brokerToken: tokens.docker_broker_token,
    };
  })());

const common = (s: Started): Omit<FuzzTarget, "baseUrl"> => ({
  pathValues: { slug: ["fuzz"], path: ["v1/echo", "v1/scores/1"] },
  secrets: s.secrets,
});

runOpenApiFuzz("the master's public listener", async () => {
  const s = await start();
  return {
    ...common(s),
    baseUrl: s.publicUrl,
    // The upstream's address is the admin's own setting (shown on the admin listener), never
    // something a proxied response may reveal.
    internalAddresses: [new URL(s.upstream.url).host],
    allow: [
      {
        kind: "internal_address",
        route: "GET /v1/registry",
        reason: "RegistryChallenge publishes internal_base_url (spec/master-and-cli.md)",
      },
      {
        kind: "internal_address",
        route: /^[A-Z]+ \/challenges\/\{slug\}/,
        // The master's own answers there (blocked paths, errors) are still checked by every
        // other rule; only the stand-in's echo of it is allowed.
        reason: "the echo upstream reflects the Host header the master sent it in its body",
      },
    ],
  };
});

runOpenApiFuzz("the master's admin listener", async () => {
  const s = await start();
  return {
    ...common(s),
    baseUrl: s.adminUrl,
    credentials: [
      { paths: ["/v1/admin/", "/admin"], schemes: ["adminToken"], headers: s.t.admin },
      {
        paths: ["/v1/docker/"],
        schemes: ["brokerToken"],
        headers: { authorization: `Bearer ${s.brokerToken}`, "x-platform-challenge-slug": "fuzz" },
      },
    ],
    // They pull images and restart containers on the Docker engine: not for random input.
    exclude: [/^POST \/v1\/admin\/challenges\/\{slug\}\/(pull|restart)$/],
    async close() {
      await s.t.close();
      await s.upstream.close();
    },
  };
});
