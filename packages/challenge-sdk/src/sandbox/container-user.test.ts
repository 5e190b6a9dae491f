import { describe, expect, it } from "vitest";
import { isRootUser, NOBODY, resolveTaskUser } from "./container-user.js";

describe("the user a task runs as", () => {
  it("runs a root image as nobody and keeps a non-root image's own numeric user", () => {
    for (const user of [undefined, "", "root", "0", "0:0", "1000:0", " root ", "00", "1000:00"]) {
      expect(isRootUser(user)).toBe(true);
      expect(resolveTaskUser(user)).toBe(NOBODY);
    }
    expect(resolveTaskUser("1000:1000")).toBe("1000:1000");
  });

  it("never leaves the group to Docker: a bare uid gets its own number as its group", () => {
    // The attack: `"user": "4242"` (or an image's `USER 4242`) ran as uid=4242 gid=0(root).
    expect(resolveTaskUser("0", "4242")).toBe("4242:4242");
    expect(resolveTaskUser("4242")).toBe("4242:4242");
    expect(resolveTaskUser(undefined, "4242:5000")).toBe("4242:5000");
  });

  it("runs a named image user as nobody: its /etc/passwd may map the name to 0", () => {
    expect(resolveTaskUser("app")).toBe(NOBODY);
    expect(resolveTaskUser("app:app")).toBe(NOBODY);
    expect(resolveTaskUser("toor")).toBe(NOBODY);
  });

  it("never returns an id beyond what Linux takes", () => {
    expect(resolveTaskUser("4294967296")).toBe(NOBODY);
    expect(() => resolveTaskUser(undefined, "4294967296")).toThrow(RangeError);
    expect(() => resolveTaskUser(undefined, "4242:0")).toThrow(RangeError);
  });
});
