import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { applyDevDefaults } from "./_dev-env-defaults.js";
import { NO_DEV_SETTINGS, projectDevSettings } from "./_dev-project-config.js";

const repo = fileURLToPath(new URL("../../../../", import.meta.url));

/** A project folder with `config` as its challenge.config.json; returns its module path. */
function project(config: unknown): string {
  const root = mkdtempSync(join(tmpdir(), "cli-dev-config-"));
  mkdirSync(join(root, "src"));
  writeFileSync(join(root, "src", "challenge.ts"), "");
  if (config !== undefined) {
    writeFileSync(
      join(root, "challenge.config.json"),
      typeof config === "string" ? config : JSON.stringify(config),
    );
  }
  return join(root, "src", "challenge.ts");
}

describe("a project's dev section (challenge.config.json)", () => {
  it("reads defaults in both forms and the Docker needs", () => {
    const settings = projectDevSettings(
      project({
        image: null,
        dev: {
          env: {
            PLAIN: "1",
            GATE: { value: "off", unless: "MODEL_URL", note: "no model: GATE=off" },
            BOTH: { value: "x", unless: ["A", "B"] },
          },
          docker: {
            note: "work waits",
            images: [{ image: "me/eval:local", env: "EVAL_IMAGE", build: "make -C {project}" }],
          },
        },
      }),
    );
    expect(settings).toEqual({
      env: {
        PLAIN: { value: "1", unless: [], note: null },
        GATE: { value: "off", unless: ["MODEL_URL"], note: "no model: GATE=off" },
        BOTH: { value: "x", unless: ["A", "B"], note: null },
      },
      docker: {
        note: "work waits",
        images: [{ image: "me/eval:local", env: "EVAL_IMAGE", build: "make -C {project}" }],
      },
    });
  });

  it("is empty without a file, without a dev section, or when the file is not JSON", () => {
    expect(projectDevSettings(project(undefined))).toBe(NO_DEV_SETTINGS);
    expect(projectDevSettings(project({ image: "x:1" }))).toBe(NO_DEV_SETTINGS);
    expect(projectDevSettings(project("{not json"))).toBe(NO_DEV_SETTINGS);
    expect(projectDevSettings(project({ dev: {} }))).toEqual({ env: {}, docker: null });
  });

  it("refuses a dev section it does not understand, naming the file and the field", () => {
    const refused = (dev: unknown) => () => projectDevSettings(project({ dev }));
    expect(refused({ envs: {} })).toThrow(/challenge\.config\.json: dev\.envs: unknown field/);
    expect(refused({ env: { X: { value: "1", unles: "Y" } } })).toThrow(
      /dev\.env\.X\.unles: unknown field/,
    );
    expect(refused({ env: { X: 1 } })).toThrow(/dev\.env\.X: must be an object/);
    expect(refused({ env: { X: { value: 1 } } })).toThrow(/dev\.env\.X\.value: must be a string/);
    expect(refused({ env: { "BAD-NAME": "1" } })).toThrow(
      /dev\.env\.BAD-NAME: not an environment variable name/,
    );
    expect(refused({ env: { X: { value: "1", unless: ["ok", "no way"] } } })).toThrow(
      /dev\.env\.X\.unless\[1\]: "no way" is not an environment variable name/,
    );
    expect(refused({ docker: { images: [{ image: "" }] } })).toThrow(
      /dev\.docker\.images\[0\]\.image: must be a non-empty string/,
    );
    expect(refused({ docker: { images: "x" } })).toThrow(/dev\.docker\.images: must be an array/);
  });

  it("never lets a project replace what dev sets itself (database, address, tokens, master)", () => {
    for (const name of ["DATABASE_URL", "CHALLENGE_TOKEN", "PORT", "PLATFORM_MASTER_URL"]) {
      expect(() => projectDevSettings(project({ dev: { env: { [name]: "x" } } }))).toThrow(
        `dev.env.${name}: platform dev sets this variable itself`,
      );
    }
  });

  it("the scoring example turns its LLM gate off only when no LLM is configured", () => {
    const settings = projectDevSettings(
      join(repo, "examples", "scoring-challenge", "src", "challenge.ts"),
    );
    expect(applyDevDefaults({}, settings.env)).toEqual({
      set: { LLM_GATE: "off" },
      notes: [expect.stringMatching(/^no LLM configured \(LLM_BASE_URL is unset\): LLM_GATE=off/)],
    });
    expect(applyDevDefaults({ LLM_BASE_URL: "http://127.0.0.1:9/v1" }, settings.env)).toEqual({
      set: {},
      notes: [],
    });
    expect(settings.docker?.images).toEqual([
      {
        image: "platform/scoring-eval:local",
        env: "EVAL_IMAGE",
        build: "bash {project}/eval-image/build.sh",
      },
    ]);
  });
});

describe("applying dev defaults", () => {
  const defaults = {
    GATE: { value: "off", unless: ["MODEL_URL", "MODEL_KEY"], note: "gate off" },
    SEED: { value: "7", unless: [], note: null },
  };

  it("fills what the user left unset, and says so", () => {
    expect(applyDevDefaults({ PATH: "/bin" }, defaults)).toEqual({
      set: { GATE: "off", SEED: "7" },
      notes: ["gate off", "SEED=7 (dev default)"],
    });
  });

  it("keeps the user's own value, silently, and an empty value counts as unset", () => {
    expect(applyDevDefaults({ GATE: "required", SEED: "" }, defaults)).toEqual({
      set: { SEED: "7" },
      notes: ["SEED=7 (dev default)"],
    });
  });

  it("stays out when any `unless` variable is set", () => {
    expect(applyDevDefaults({ MODEL_KEY: "k" }, defaults).set).toEqual({ SEED: "7" });
    expect(applyDevDefaults({ MODEL_URL: "", MODEL_KEY: "" }, defaults).set).toEqual({
      GATE: "off",
      SEED: "7",
    });
  });
});
