// The process a container runs: start from the environment (PORT, DATABASE_URL or DATA_DIR,
// CHALLENGE_TOKEN, SECRET_KEY_FILE...), stop gracefully on SIGTERM, print every bad setting and
// exit 1 on a bad configuration.
import { runChallenge } from "@platform/challenge-sdk";
import { challenge } from "./challenge.js";

await runChallenge(challenge);
