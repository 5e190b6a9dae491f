import { describe, expect, it } from "vitest";
import { ConfigError, loadMasterConfig } from "../config.js";

const base = { ADMIN_TOKEN: "a".repeat(32) };
const broker = (env: Record<string, string> = {}) =>
  loadMasterConfig({}, { ...base, ...env }).broker;

describe("broker configuration", () => {
  it("defaults to the engine, no allowed image, 4 workloads and no GPU per challenge, GPU host detected", () => {
    const config = broker();
    expect(config).toMatchObject({
      backend: "engine",
      allowedImagePrefixes: [],
      maxConcurrent: 4,
      maxGpus: 0,
      gpuDevices: [],
      limits: { cpus: 2, memoryMb: 4096, pids: 512 },
      reaperIntervalSeconds: 30,
      dockerNetwork: "platform",
    });
    expect(config.gpuHost).toBeUndefined();
    expect(config.masterUrl).toBeUndefined();
  });

  it("reads every setting from the environment", () => {
    const config = broker({
      PLATFORM_BROKER_BACKEND: "swarm",
      PLATFORM_BROKER_IMAGES: "ghcr.io/org/, registry.example/tasks/ ,",
      PLATFORM_BROKER_MAX_CONCURRENT: "8",
      PLATFORM_BROKER_MAX_GPUS: "2",
      PLATFORM_BROKER_GPU_HOST: "true",
      PLATFORM_BROKER_GPU_DEVICES: "0,1",
      PLATFORM_BROKER_CPUS: "1.5",
      PLATFORM_BROKER_MEMORY_MB: "2048",
      PLATFORM_BROKER_REAPER_SECONDS: "0",
      PLATFORM_DOCKER_NETWORK: "subnet",
      PLATFORM_MASTER_URL: "http://10.0.0.1:8080",
    });
    expect(config).toMatchObject({
      backend: "swarm",
      allowedImagePrefixes: ["ghcr.io/org/", "registry.example/tasks/"],
      maxConcurrent: 8,
      maxGpus: 2,
      gpuHost: true,
      gpuDevices: ["0", "1"],
      limits: { cpus: 1.5, memoryMb: 2048 },
      reaperIntervalSeconds: 0,
      dockerNetwork: "subnet",
      masterUrl: "http://10.0.0.1:8080",
    });
  });

  it.each([
    ["PLATFORM_BROKER_BACKEND", "kubernetes"],
    ["PLATFORM_BROKER_MAX_CONCURRENT", "0"],
    ["PLATFORM_BROKER_CPUS", "-1"],
    ["PLATFORM_BROKER_GPU_HOST", "yes"],
    ["PLATFORM_BROKER_MEMORY_MB", "8"],
  ])("refuses %s=%s with a ConfigError", (name, value) => {
    expect(() => broker({ [name]: value })).toThrow(ConfigError);
  });
});
