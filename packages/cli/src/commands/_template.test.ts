import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import {
  findTemplateDir,
  nameFromSlug,
  rewriteFile,
  slugProblem,
  targetPath,
  templateFiles,
  writeProject,
} from "./_template.js";

const repoTemplate = fileURLToPath(new URL("../../../../templates/challenge/", import.meta.url));
const versionTable: Record<string, string> = {
  "@platform/challenge-sdk": "2.3.4",
  "@platform/cli": "5.6.7",
};
const versions = (name: string) => versionTable[name] ?? "0.0.0-unknown";
const identity = {
  slug: "my-chal",
  name: "My Chal",
  version: "1.2.3",
  image: "ghcr.io/me/my-chal:1.2.3",
};

describe("slugs and names", () => {
  it("accepts the registry's slugs and says why it refuses the others", () => {
    for (const slug of ["my-chal", "a1", "x-y-z", "0abc", "a".repeat(63)])
      expect(slugProblem(slug)).toBeNull();
    expect(slugProblem("a")).toMatch(/2 to 63/);
    expect(slugProblem("a".repeat(64))).toMatch(/2 to 63/);
    for (const slug of ["My-Chal", "-abc", "abc-", "a_b", "a b", "ab/c", "é-a"]) {
      expect(slugProblem(slug)).toMatch(/lower-case letters/);
    }
    expect(slugProblem("sdk")).toMatch(/reserved/);
  });

  it("derives a display name from the slug", () => {
    expect(nameFromSlug("my-chal")).toBe("My Chal");
    expect(nameFromSlug("scoring-v2")).toBe("Scoring V2");
    expect(nameFromSlug("x")).toBe("X");
  });
});

describe("finding the template", () => {
  it("uses the repository's templates/challenge when run from sources", () => {
    expect(findTemplateDir()).toBe(repoTemplate);
  });

  it("uses dist/template next to the built CLI", () => {
    const root = mkdtempSync(join(tmpdir(), "cli-layout-"));
    mkdirSync(join(root, "dist", "template"), { recursive: true });
    writeFileSync(join(root, "dist", "template", "package.json"), "{}");
    writeFileSync(join(root, "dist", "template", "challenge.config.json"), "{}");
    const built = pathToFileURL(join(root, "dist", "cli.js"));
    expect(findTemplateDir(built)).toBe(join(root, "dist", "template/"));
    expect(() => findTemplateDir(pathToFileURL(join(root, "elsewhere", "cli.js")))).toThrow(
      /template is missing/,
    );
  });
});

describe("rewriting", () => {
  it("sets package.json's name and each @platform/* range to its own package's version", () => {
    const source = Buffer.from(
      JSON.stringify({
        name: "shortest-tour",
        scripts: { test: "vitest run" },
        dependencies: { "@platform/challenge-sdk": "^0.0.0", other: "1.0.0" },
        devDependencies: { "@platform/cli": "^0.0.0", vitest: "^4.1.0" },
      }),
    );
    // Distinct versions: an SDK range taken from the CLI's version (or the reverse) fails here.
    const out = JSON.parse(
      rewriteFile("package.json", source, identity, versions).toString(),
    ) as Record<string, unknown>;
    expect(out).toEqual({
      name: "my-chal",
      scripts: { test: "vitest run" },
      dependencies: { "@platform/challenge-sdk": "^2.3.4", other: "1.0.0" },
      devDependencies: { "@platform/cli": "^5.6.7", vitest: "^4.1.0" },
    });
  });

  it("fills the identity in challenge.config.json, keeping its other fields", () => {
    const source = Buffer.from(
      JSON.stringify({
        slug: "shortest-tour",
        name: "Shortest Tour",
        version: "0.1.0",
        image: null,
        description: "d",
      }),
    );
    const out = JSON.parse(
      rewriteFile("challenge.config.json", source, identity, versions).toString(),
    ) as unknown;
    expect(out).toEqual({ ...identity, description: "d" });
  });

  it("copies every other file byte for byte", () => {
    const bytes = Buffer.from([0, 1, 2, 255, 10]);
    expect(rewriteFile("src/challenge.ts", bytes, identity, versions)).toBe(bytes);
    expect(rewriteFile("test/package.json", bytes, identity, versions)).toBe(bytes);
  });

  it("renames _gitignore to .gitignore, in any folder", () => {
    expect(targetPath("_gitignore")).toBe(".gitignore");
    expect(targetPath(join("sub", "_gitignore"))).toBe(join("sub", ".gitignore"));
    expect(targetPath(join("src", "challenge.ts"))).toBe(join("src", "challenge.ts"));
  });
});

describe("writing a project", () => {
  it("writes every template file (installs and builds skipped), rewriting only the identity", () => {
    const template = mkdtempSync(join(tmpdir(), "cli-template-"));
    for (const [file, content] of Object.entries({
      "package.json": JSON.stringify({
        name: "t",
        dependencies: { "@platform/challenge-sdk": "^0.0.0" },
      }),
      "challenge.config.json": JSON.stringify({
        slug: "t",
        name: "T",
        version: "0.0.1",
        image: null,
      }),
      _gitignore: "node_modules/\n",
      "src/challenge.ts": "export const x = 1;\n",
      "node_modules/dep/index.js": "junk",
      "dist/main.js": "junk",
      ".platform/pglite/PG_VERSION": "17",
      "package-lock.json": "{}",
      "x.tsbuildinfo": "{}",
    })) {
      mkdirSync(join(template, file, ".."), { recursive: true });
      writeFileSync(join(template, file), content);
    }
    expect(templateFiles(template)).toEqual(
      ["_gitignore", "challenge.config.json", "package.json", join("src", "challenge.ts")].sort(),
    );
    const out = join(mkdtempSync(join(tmpdir(), "cli-out-")), "project");
    const written = writeProject(template, out, identity, versions);
    expect(written).toEqual(
      [".gitignore", "challenge.config.json", "package.json", join("src", "challenge.ts")].sort(),
    );
    expect(readFileSync(join(out, ".gitignore"), "utf8")).toBe("node_modules/\n");
    expect(readFileSync(join(out, "src", "challenge.ts"), "utf8")).toBe("export const x = 1;\n");
    expect(JSON.parse(readFileSync(join(out, "package.json"), "utf8"))).toMatchObject({
      name: "my-chal",
    });
  });

  it("the real template has what a project needs, and a .gitignore only as _gitignore", () => {
    const files = templateFiles(repoTemplate);
    for (const file of [
      "package.json",
      "challenge.config.json",
      "tsconfig.json",
      "vitest.config.ts",
      join("src", "challenge.ts"),
      join("src", "main.ts"),
      join("test", "challenge.test.ts"),
      join("migrations", "0001_submissions.sql"),
      "README.md",
      "Dockerfile",
      ".dockerignore",
      "_gitignore",
    ]) {
      expect(files).toContain(file);
    }
    expect(files).not.toContain(".gitignore");
  });
});
