import { isRootUser, NOBODY, resolveTaskUser } from "@platform/challenge-sdk/sandbox";
import type { BrokerFile, BrokerRunRequest, HttpError } from "@platform/core";
import { describe, expect, it } from "vitest";
import { loadMasterConfig } from "../config.js";
import { enforceImagePolicy } from "../registry/image-policy.js";
import { SWARM_MAX_FILE_BYTES } from "./swarm-executor.js";
import { brokerImagePolicy, checkWorkloadRequest } from "./workload-admission.js";

const config = loadMasterConfig(
  {},
  { ADMIN_TOKEN: "a".repeat(32), PLATFORM_BROKER_IMAGES: "platform-test/" },
).broker;
const request = (extra: Partial<BrokerRunRequest> = {}): BrokerRunRequest => ({
  job_id: "j",
  image: "platform-test/x:1",
  timeout_seconds: 60,
  gpus: 0,
  ...extra,
});
/** The checks of the engine backend with the default configuration. */
const check = (extra: Partial<BrokerRunRequest> = {}) =>
  checkWorkloadRequest(request(extra), config, "engine");
const refuseWeakening = (req: BrokerRunRequest) => checkWorkloadRequest(req, config, "engine");
const resolveLimits = (limits: BrokerRunRequest["limits"]) => check({ limits }).limits;
const checkLabels = (labels: Record<string, string>) => check({ labels });
const checkBrokerImage = (image: string, prefixes: string[]) =>
  enforceImagePolicy(image, brokerImagePolicy({ allowedImagePrefixes: prefixes }));

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

describe("the workload's user (the sandbox's resolveTaskUser)", () => {
  it("runs root images as nobody and keeps a non-root image user", () => {
    for (const user of [undefined, "", "root", "0", "0:0", "root:root"]) {
      expect(isRootUser(user)).toBe(true);
      expect(resolveTaskUser(user)).toBe(NOBODY);
    }
    expect(resolveTaskUser("1000:1000")).toBe("1000:1000");
    // Never a name (the image's /etc/passwd may map it to 0) and never Docker's default group:
    // issue 10 item 3, "4242" ran as gid 0.
    expect(resolveTaskUser("app")).toBe(NOBODY);
    expect(resolveTaskUser("0", "4242")).toBe("4242:4242");
  });
});

describe("resolveLimits", () => {
  it("defaults to 2 CPUs, 4 GiB, 512 pids, 256 MiB tmpfs and 1 MiB of output", () => {
    expect(resolveLimits(undefined)).toEqual({
      cpus: 2,
      memoryBytes: 4096 * 1024 * 1024,
      pids: 512,
      tmpfsBytes: 256 * 1024 * 1024,
      outputBytes: 1024 * 1024,
    });
  });

  it("lets a request lower the limits, and raise tmpfs and output up to their maxima", () => {
    expect(
      resolveLimits({
        cpus: 0.5,
        memory_mb: 64,
        pids: 16,
        tmpfs_mb: 2048,
        output_bytes: 16 * 1024 * 1024,
      }),
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
    const error = thrown(() => resolveLimits(limits));
    expect(error.code).toBe("limit_exceeded");
    expect(error.extra).toMatchObject({ field: `limits.${field}` });
  });
});

describe("labels, and the image policy (registry/image-policy.ts) with the broker's prefixes", () => {
  it("reserves the platform. label namespace", () => {
    expect(() => checkLabels({ "team.name": "x" })).not.toThrow();
    expect(thrown(() => checkLabels({ "platform.challenge": "other" })).code).toBe("invalid_label");
    expect(thrown(() => checkLabels({ platform: "x" })).code).toBe("invalid_label");
  });

  it("allows only images under a configured prefix, and none when the list is empty", () => {
    const prefixes = ["ghcr.io/org/", "platform-test/"];
    expect(() => checkBrokerImage("ghcr.io/org/task:1", prefixes)).not.toThrow();
    expect(() =>
      checkBrokerImage(`platform-test/busybox@sha256:${"a".repeat(64)}`, prefixes),
    ).not.toThrow();
    // Not a reference Docker accepts: the one validator refuses it before Docker is asked.
    expect(thrown(() => checkBrokerImage("platform-test/busybox@sha256:abc", prefixes)).code).toBe(
      "image_not_allowed",
    );
    for (const image of [
      "ghcr.io/organisation/task:1",
      "docker.io/ghcr.io/org/x:1",
      "ghcr.io/org/../evil:1",
      "ghcr.io/org//x:1",
      "GHCR.IO/ORG/x",
      " ghcr.io/org/x",
    ]) {
      expect(thrown(() => checkBrokerImage(image, prefixes)).code, image).toBe("image_not_allowed");
    }
    expect(thrown(() => checkBrokerImage("ghcr.io/org/task:1", [])).message).toContain(
      "PLATFORM_BROKER_IMAGES",
    );
    expect(thrown(() => checkBrokerImage("anything:1", [""])).code).toBe("image_not_allowed");
  });
});

const caps = { maxCount: 4, maxFileBytes: 10, maxTotalBytes: 16 };
const file = (path: string, text = "x", mode?: number) => ({
  path,
  content_base64: Buffer.from(text).toString("base64"),
  ...(mode ? { mode } : {}),
});
/** The files the checks decode, under the caps above. */
const validateFiles = (files: BrokerFile[] | undefined, fileCaps = caps) =>
  checkWorkloadRequest(request(files ? { files } : {}), { ...config, files: fileCaps }, "engine")
    .files;

function refusal(files: BrokerFile[]): HttpError {
  try {
    validateFiles(files);
  } catch (error) {
    return error as HttpError;
  }
  throw new Error("expected a refusal");
}

describe("files", () => {
  it("decodes valid files with their modes (default 0644)", () => {
    const placed = validateFiles([file("a.txt", "hi"), file("bin/run", "#!", 0o755)], caps);
    expect(placed).toEqual([
      { path: "a.txt", data: Buffer.from("hi"), mode: 0o644 },
      { path: "bin/run", data: Buffer.from("#!"), mode: 0o755 },
    ]);
    expect(validateFiles(undefined, caps)).toEqual([]);
  });

  it.each([
    ["..", "../x"],
    ["a nested ..", "a/../../x"],
    ["a trailing ..", "a/.."],
    ["an absolute path", "/etc/passwd"],
    ["a NUL", "a\u0000b"],
    ["a newline", "a\nb"],
    ["a dot segment", "a/./b"],
    ["an empty segment", "a//b"],
    ["a trailing slash", "a/"],
    ["a backslash", "a\\b"],
    ["a name over 100 bytes", `d/${"n".repeat(101)}`],
  ])("refuses %s (400 invalid_file, naming the entry)", (_label, path) => {
    const error = refusal([file("ok"), file(path)]);
    expect(error.status).toBe(400);
    expect(error.code).toBe("invalid_file");
    expect(error.message).toMatch(/^files\[1\]/);
  });

  it("refuses non-canonical base64, duplicates, a path under a file, and sizes over the caps", () => {
    expect(refusal([{ path: "a", content_base64: "aGk" }]).code).toBe("invalid_file");
    expect(refusal([{ path: "a", content_base64: "a GVsbG8=" }]).code).toBe("invalid_file");
    expect(refusal([file("a"), file("a")]).message).toContain("twice");
    expect(refusal([file("a"), file("a/b")]).message).toContain("parent");
    expect(refusal([file("big", "x".repeat(11))]).message).toContain("at most 10");
    expect(refusal([file("a", "x".repeat(9)), file("b", "x".repeat(9))]).message).toContain(
      "16 bytes in all",
    );
    expect(refusal([file("a"), file("b"), file("c"), file("d"), file("e")]).message).toContain(
      "At most 4 files",
    );
  });
});

describe("the swarm backend", () => {
  it("refuses an empty file and caps a file at what a swarm config holds", () => {
    const swarm = (files: BrokerFile[]) =>
      thrown(() => checkWorkloadRequest(request({ files }), config, "swarm"));
    const empty = swarm([file("a"), { path: "b", content_base64: "" }]);
    expect(empty).toMatchObject({ status: 400, code: "invalid_file", extra: { index: 1 } });
    const big = Buffer.alloc(SWARM_MAX_FILE_BYTES + 1).toString("base64");
    expect(swarm([{ path: "big", content_base64: big }]).code).toBe("invalid_file");
    expect(() =>
      checkWorkloadRequest(
        request({ files: [{ path: "big", content_base64: big }] }),
        config,
        "engine",
      ),
    ).not.toThrow();
  });
});
