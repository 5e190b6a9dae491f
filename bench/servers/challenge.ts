// A real SDK challenge for the bench figures: one bridge route (the master's verified uploads
// land there, the forwarded nonce spent in its database as in production), on an in-memory
// embedded database. CHALLENGE_TOKEN comes from the environment (the master issued it).
// Prints its URL on stdout, then serves until SIGTERM.
import { defineChallenge, json } from "@platform/challenge-sdk";

const challenge = defineChallenge({
  slug: "bench",
  version: "1.0.0",
  weights: () => ({}),
  routes: (router) =>
    router.bridge({
      method: "POST",
      path: "/internal/v1/bridge/submissions",
      body: "raw",
      contentTypes: ["application/json", "application/zip"],
      handler: ({ body, miner }) =>
        json({ hotkey: miner.hotkey, bytes: body.byteLength }, { status: 201 }),
    }),
});

const running = await challenge.start({ host: "127.0.0.1", port: 0, memory: true });
console.log(running.url);

process.once("SIGTERM", async () => {
  await running.close();
  process.exit(0);
});
