// The master's image must run the Node the suite was tested on: deploy/build-images.sh pins its
// own version (with the registry's integrity), .ci/node.sh pins the default line CI installs.
// Two pins drift silently unless something compares them.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { DEPLOY } from "./_deploy-test-kit.js";

function pinned(file: string, name: string): string {
  const match = new RegExp(`^${name}=([0-9]+\\.[0-9]+\\.[0-9]+)$`, "m").exec(
    readFileSync(file, "utf8"),
  );
  if (!match?.[1]) throw new Error(`${file} pins no ${name}`);
  return match[1];
}

describe("the master image's Node", () => {
  it("is the default line CI installs and tests on", () => {
    const image = pinned(join(DEPLOY, "build-images.sh"), "node_version");
    const ci = pinned(join(DEPLOY, "..", ".ci", "node.sh"), "NODE_DEFAULT");
    expect(image).toBe(ci);
  });
});
