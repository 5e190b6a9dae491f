// A real SDK challenge with one miner-signed submission route, for the sdk-signed-pool figure:
// the signature checked over the exact bytes, the nonce spent in its in-memory embedded
// database, the JSON validated, as in production. VERIFY_POOL_SIZE (from the environment)
// says where signatures are verified: 0 on the event loop, N on N worker threads.
// Prints its URL on stdout, then serves until SIGTERM.
import { defineChallenge, json, Type } from "@platform/challenge-sdk";

const challenge = defineChallenge({
  slug: "bench",
  version: "1.0.0",
  weights: () => ({}),
  routes: (router) =>
    router.submission({
      path: "/v1/submissions",
      body: Type.Object({ answer: Type.String() }),
      handler: ({ body, miner }) =>
        json({ hotkey: miner.hotkey, bytes: body.answer.length }, { status: 201 }),
    }),
});

const running = await challenge.start({
  host: "127.0.0.1",
  port: 0,
  memory: true,
  env: { ...process.env, CHALLENGE_TOKEN: "bench-challenge-token-0123456789" },
});
console.log(running.url);

process.once("SIGTERM", async () => {
  await running.close();
  process.exit(0);
});
