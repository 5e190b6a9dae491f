import { describe, expect, it } from "vitest";
import { refuseWeakening } from "./refuse-weakening.js";

describe("refusing a weakened sandbox", () => {
  it.each([
    [{ privileged: true }, "privileged"],
    [{ network: "host" }, "network"],
    [{ network: "bridge" }, "network"],
    [{ read_only: false }, "read_only"],
    [{ cap_add: ["SYS_ADMIN"] }, "cap_add"],
    [{ devices: ["/dev/kvm"] }, "devices"],
    [{ host_mounts: ["/:/host"] }, "host_mounts"],
    [{ user: "0" }, "user"],
    [{ user: "root" }, "user"],
    [{ user: "1000:0" }, "user"],
    [{ user: "0:1000" }, "user"],
    [{ user: "app" }, "user"],
    [{ user: "00" }, "user"],
    [{ user: "4294967296" }, "user"],
    [{ user: "4242:4294967296" }, "user"],
    [{ security_opt: ["seccomp=unconfined"] }, "security_opt"],
    [{ pid_mode: "host" }, "pid_mode"],
    [{ ipc_mode: "host" }, "ipc_mode"],
    [{ userns_mode: "host" }, "userns_mode"],
    [{ sysctls: { "net.ipv4.ip_forward": "1" } }, "sysctls"],
    [{ ulimits: [{ name: "nproc", soft: -1, hard: -1 }] }, "ulimits"],
    [{ binds: ["/:/host"] }, "binds"],
    [{ mounts: [{ Type: "bind", Source: "/", Target: "/host" }] }, "mounts"],
    [{ runtime: "runc" }, "runtime"],
  ])("refuses %o", (weakening, field) => {
    try {
      refuseWeakening(weakening);
      throw new Error("not refused");
    } catch (error) {
      expect(error).toMatchObject({ code: "weakening_refused", retryable: false });
      expect((error as Error).message).toContain(`${field}:`);
    }
  });

  it("accepts asking for exactly the defaults", () => {
    expect(() =>
      refuseWeakening({
        privileged: false,
        network: "none",
        read_only: true,
        cap_add: [],
        devices: [],
        host_mounts: [],
        user: "1000:1000",
      }),
    ).not.toThrow();
  });
});
