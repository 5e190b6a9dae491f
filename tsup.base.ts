import { defineConfig, type Options } from "tsup";

/**
 * The one build recipe every package extends: ESM only, Node 22 (the oldest supported line), declarations on,
 * dependencies left external (npm installs them next to the package).
 */
export function packageBuild(overrides: Options = {}) {
  return defineConfig({
    entry: ["src/index.ts"],
    format: ["esm"],
    target: "node22",
    platform: "node",
    dts: true,
    sourcemap: true,
    clean: true,
    splitting: false,
    treeshake: true,
    tsconfig: "tsconfig.build.json",
    ...overrides,
  });
}
