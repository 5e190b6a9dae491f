import { isRootUser, NOBODY } from "@platform/challenge-sdk";
import type { BrokerRunRequest, HttpError } from "@platform/core";
import { describe, expect, it } from "vitest";
import { loadMasterConfig } from "../config.js";
import {
  checkLabels,
  enforceBrokerImage,
  refuseWeakening,
  resolveLimits,
  resolveUser,
} from "./hardening.js";

const config = loadMasterConfig({}, { ADMIN_TOKEN: "a".repeat(32) }).broker;
const request = (extra: Partial<BrokerRunRequest> = {}): BrokerRunRequest => ({
  job_id: "j",
  image: "x",
  timeout_seconds: 60,
  gpus: 0,
  ...extra,
});

function thrown(action: () => unknown): HttpError {
  try {
    action();
  } catch (error) {
    return error as HttpError;
  }
  throw new Error("expected a refusal");
}

describe("refuseWeakening", () => {
  it("accepts the defaults spelled out", () => {
    expect(() =>
      refuseWeakening(
        request({
          privileged: false,
          network: "none",
          read_only: true,
          cap_add: [],
          devices: [],
          host_mounts: [],
          user: "1000:1000",
        }),
      ),
    ).not.toThrow();
  });

  it.each([
    ["privileged", { privileged: true }],
    ["network", { network: "bridge" }],
    ["network", { network: "" }],
    ["read_only", { read_only: false }],
    ["cap_add", { cap_add: ["NET_ADMIN"] }],
    ["devices", { devices: ["/dev/sda"] }],
    ["host_mounts", { host_mounts: ["/var/run/docker.sock:/var/run/docker.sock"] }],
    ["user", { user: "root" }],
    ["user", { user: "root:root" }],
    ["user", { user: "0" }],
    ["user", { user: "00" }],
    ["user", { user: "1000:0" }],
    ["user", { user: "app:root" }],
  ] as [string, Partial<BrokerRunRequest>][])(
    "refuses a weakened %s (400 weakening_refused)",
    (field, extra) => {
      const error = thrown(() => refuseWeakening(request(extra)));
      expect(error.status).toBe(400);
      expect(error.code).toBe("weakening_refused");
      expect(error.extra).toEqual({ field });
      expect(error.message.startsWith(`${field}:`)).toBe(true);
    },
  );

  it("refuses user names (resolved by the image, so possibly root)", () => {
    expect(thrown(() => refuseWeakening(request({ user: "nobody" }))).code).toBe(
      "weakening_refused",
    );
  });
});

describe("resolveUser", () => {
  it("runs root images as nobody and keeps a non-root image user", () => {
    for (const user of [undefined, "", "root", "0", "0:0", "root:root"]) {
      expect(isRootUser(user)).toBe(true);
      expect(resolveUser(undefined, user)).toBe(NOBODY);
    }
    expect(resolveUser(undefined, "1000:1000")).toBe("1000:1000");
    expect(resolveUser(undefined, "app")).toBe("app");
    expect(resolveUser("4242", "0")).toBe("4242");
  });
});

describe("resolveLimits", () => {
  it("defaults to 2 CPUs, 4 GiB, 512 pids, 256 MiB tmpfs and 1 MiB of output", () => {
    expect(resolveLimits(undefined, config)).toEqual({
      cpus: 2,
      memoryBytes: 4096 * 1024 * 1024,
      pids: 512,
      tmpfsBytes: 256 * 1024 * 1024,
      outputBytes: 1024 * 1024,
    });
  });

  it("lets a request lower the limits, and raise tmpfs and output up to their maxima", () => {
    expect(
      resolveLimits(
        { cpus: 0.5, memory_mb: 64, pids: 16, tmpfs_mb: 2048, output_bytes: 16 * 1024 * 1024 },
        config,
      ),
    ).toEqual({
      cpus: 0.5,
      memoryBytes: 64 * 1024 * 1024,
      pids: 16,
      tmpfsBytes: 2048 * 1024 * 1024,
      outputBytes: 16 * 1024 * 1024,
    });
  });

  it.each([
    ["cpus", { cpus: 2.5 }],
    ["memory_mb", { memory_mb: 4097 }],
    ["pids", { pids: 513 }],
    ["tmpfs_mb", { tmpfs_mb: 2049 }],
    ["output_bytes", { output_bytes: 16 * 1024 * 1024 + 1 }],
  ])("refuses %s above the maximum (400 limit_exceeded), never clamps", (field, limits) => {
    const error = thrown(() => resolveLimits(limits, config));
    expect(error.code).toBe("limit_exceeded");
    expect(error.extra).toMatchObject({ field: `limits.${field}` });
  });
});

describe("checkLabels and enforceBrokerImage", () => {
  it("reserves the platform. label namespace", () => {
    expect(() => checkLabels({ "team.name": "x" })).not.toThrow();
    expect(thrown(() => checkLabels({ "platform.challenge": "other" })).code).toBe("invalid_label");
    expect(thrown(() => checkLabels({ platform: "x" })).code).toBe("invalid_label");
  });

  it("allows only images under a configured prefix, and none when the list is empty", () => {
    const prefixes = ["ghcr.io/org/", "platform-test/"];
    expect(() => enforceBrokerImage("ghcr.io/org/task:1", prefixes)).not.toThrow();
    expect(() => enforceBrokerImage("platform-test/busybox@sha256:abc", prefixes)).not.toThrow();
    for (const image of [
      "ghcr.io/organisation/task:1",
      "docker.io/ghcr.io/org/x:1",
      "ghcr.io/org/../evil:1",
      "ghcr.io/org//x:1",
      "GHCR.IO/ORG/x",
      " ghcr.io/org/x",
    ]) {
      expect(thrown(() => enforceBrokerImage(image, prefixes)).code, image).toBe(
        "image_not_allowed",
      );
    }
    expect(thrown(() => enforceBrokerImage("ghcr.io/org/task:1", [])).message).toContain(
      "PLATFORM_BROKER_IMAGES",
    );
    expect(thrown(() => enforceBrokerImage("anything:1", [""])).code).toBe("image_not_allowed");
  });
});
