import { describe, expect, it } from "vitest";
import { serviceContainerOptions } from "./service-container.js";

const base = {
  name: "platform-challenge-demo",
  image: "ghcr.io/org/demo:1",
  env: { PORT: "8080", MODE: "test" },
  labels: { "platform.runtime": "challenge" },
  network: "platform",
  volumes: [{ source: "platform-demo-data", target: "/data" }],
};

describe("serviceContainerOptions", () => {
  it("locks a service down like a task (capabilities, no-new-privileges, init, noexec /tmp) but gives it a network and restarts", () => {
    const options = serviceContainerOptions(base);
    expect(options).toMatchObject({
      name: "platform-challenge-demo",
      Image: "ghcr.io/org/demo:1",
      Env: ["PORT=8080", "MODE=test"],
      Labels: { "platform.runtime": "challenge" },
    });
    expect(options.HostConfig).toEqual({
      NetworkMode: "platform",
      RestartPolicy: { Name: "unless-stopped" },
      CapDrop: ["ALL"],
      SecurityOpt: ["no-new-privileges:true"],
      Init: true,
      PidsLimit: 4096,
      Tmpfs: { "/tmp": `rw,noexec,nosuid,nodev,size=${256 * 1024 * 1024}` },
      Mounts: [{ Type: "volume", Source: "platform-demo-data", Target: "/data" }],
      ExtraHosts: ["host.docker.internal:host-gateway"],
      LogConfig: { Type: "json-file", Config: { "max-size": "10m", "max-file": "3" } },
    });
    // A service's root stays writable: it is the operator's code.
    expect(options.HostConfig?.ReadonlyRootfs).toBeUndefined();
  });

  it("caps CPU, memory (no swap), pids and asks nvidia for GPUs only when the record says so", () => {
    const capped = serviceContainerOptions({
      ...base,
      cpus: 1.5,
      memoryMb: 512,
      pids: 64,
      gpus: 1,
    });
    expect(capped.HostConfig).toMatchObject({
      NanoCpus: 1_500_000_000,
      Memory: 512 * 1024 * 1024,
      MemorySwap: 512 * 1024 * 1024,
      PidsLimit: 64,
      DeviceRequests: [{ Driver: "nvidia", Count: 1, Capabilities: [["gpu"]] }],
    });
  });
});
