import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // The suites start real servers on real databases (embedded, and PostgreSQL when it answers).
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
