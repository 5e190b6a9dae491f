import { LOCAL_SUBTENSOR_RUNTIMES } from "@platform/chain/local";
import { describe, expect, it } from "vitest";
import { RUNTIME_NAMES, runtimeOf } from "./_runtime-flag.js";

describe("--runtime", () => {
  it("accepts exactly the runtimes the local subtensor serves, its default first", () => {
    expect([...RUNTIME_NAMES]).toEqual([...LOCAL_SUBTENSOR_RUNTIMES]);
    for (const name of LOCAL_SUBTENSOR_RUNTIMES) expect(runtimeOf(name)).toBe(name);
  });

  it("refuses any other value by name", () => {
    expect(() => runtimeOf("spec467")).toThrow(
      '--runtime must be one of spec424, spec393, got "spec467"',
    );
  });
});
