import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

// Tests run against the TypeScript sources of every workspace package, never a stale dist/.
const alias = {
  "@platform/core": here("packages/core/src/index.ts"),
  "@platform/challenge-sdk": here("packages/challenge-sdk/src/index.ts"),
  "@platform/master": here("packages/master/src/index.ts"),
};

const project = (name: string, root: string, timeout = 30_000) => ({
  resolve: { alias },
  test: {
    name,
    root: here(root),
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    testTimeout: timeout,
    hookTimeout: 60_000,
  },
});

export default defineConfig({
  test: {
    projects: [project("core", "packages/core")],
    reporters: process.env.CI ? ["default"] : ["default"],
  },
});
