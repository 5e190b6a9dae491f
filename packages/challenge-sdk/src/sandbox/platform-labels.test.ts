import { describe, expect, it } from "vitest";
import {
  deadlineOf,
  labelFilters,
  ownershipLabels,
  PLATFORM_LABELS,
  refuseReservedLabels,
} from "./platform-labels.js";

/** Matches the SandboxRefusal with `code` that a check throws. */
const refusal = (code: string) => expect.objectContaining({ name: "SandboxRefusal", code });

describe("ownership labels", () => {
  it("reserves the platform. label namespace for runners", () => {
    expect(() => refuseReservedLabels({ "platform.managed": "false" })).toThrow(
      refusal("invalid_label"),
    );
    expect(() => refuseReservedLabels({ platform: "x" })).toThrow(refusal("invalid_label"));
    expect(() => refuseReservedLabels({ "platformish.team": "a", team: "b" })).not.toThrow();
  });
});

describe("ownershipLabels, labelFilters and deadlineOf", () => {
  it("labels every object of a task with its owner, only the fields it has, and its role", () => {
    expect(ownershipLabels({ job: "j1", deadline: 1700000000, runner: "sdk-docker" })).toEqual({
      "platform.managed": "true",
      "platform.job": "j1",
      "platform.runner": "sdk-docker",
      "platform.deadline": "1700000000",
      "platform.role": "run",
    });
    expect(
      ownershipLabels(
        { job: "j2", deadline: 5, challenge: "my-challenge", master: "m-1", gpus: 0 },
        "files",
      ),
    ).toEqual({
      "platform.managed": "true",
      "platform.challenge": "my-challenge",
      "platform.job": "j2",
      "platform.deadline": "5",
      "platform.master": "m-1",
      "platform.gpus": "0",
      "platform.role": "files",
    });
  });

  it("builds Docker label filters, leaving unset values out", () => {
    expect(
      labelFilters({ managed: "true", master: "m-1", challenge: undefined, role: "run" }),
    ).toEqual(["platform.managed=true", "platform.master=m-1", "platform.role=run"]);
  });

  it("reads a deadline back, and nothing from a missing or garbled one", () => {
    expect(deadlineOf(ownershipLabels({ job: "j", deadline: 42 }))).toBe(42);
    expect(deadlineOf({ [PLATFORM_LABELS.deadline]: "soon" })).toBeNull();
    expect(deadlineOf({ [PLATFORM_LABELS.deadline]: "" })).toBeNull();
    expect(deadlineOf(undefined)).toBeNull();
  });
});
