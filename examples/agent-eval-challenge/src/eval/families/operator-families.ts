/**
 * An operator's own task families: a directory mounted into the service at deploy time
 * (TASK_FAMILIES_DIR), never in the image or the repository. Each `<family id>.mjs` file is an
 * ES module without imports whose default export is
 *
 *   { title, instructions, bounds, generate(random), check(input, output) }
 *
 * (`random` is a SeededRandom: int, pick, shuffle, word; `check` returns true for a correct
 * answer). The service hashes the files into the family set's revision and releases their text,
 * sealed with the run's instance seed, to the measured evaluator only; both load a family from
 * those exact bytes (a data: URL import), so what ran is what was hashed.
 */
import { lstat, readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import type { TaskFamily } from "./task-family.js";

export interface OperatorFamilySource {
  /** `<family id>.mjs` */
  file: string;
  /** The module's text, exactly as read. */
  source: string;
}

/** At most this many operator families, each file at most this large (they travel sealed). */
export const MAX_OPERATOR_FAMILIES = 16;
export const MAX_OPERATOR_FAMILY_BYTES = 64 * 1024;
const FAMILY_FILE = /^([a-z0-9][a-z0-9-]{0,63})\.mjs$/;

/** The `.mjs` files of `directory`, sorted by name (throws with what is wrong: no start). */
export async function readOperatorFamilies(directory: string): Promise<OperatorFamilySource[]> {
  const names = (await readdir(directory)).filter((name) => name.endsWith(".mjs")).sort();
  if (names.length > MAX_OPERATOR_FAMILIES) {
    throw new Error(`${directory}: more than ${MAX_OPERATOR_FAMILIES} task families`);
  }
  const sources: OperatorFamilySource[] = [];
  for (const file of names) {
    if (!FAMILY_FILE.test(file)) throw new Error(`${file}: not <family id>.mjs`);
    const path = join(directory, file);
    const stats = await lstat(path);
    if (!stats.isFile()) throw new Error(`${file}: not a regular file`);
    if (stats.size > MAX_OPERATOR_FAMILY_BYTES) {
      throw new Error(`${file}: over ${MAX_OPERATOR_FAMILY_BYTES} bytes`);
    }
    sources.push({ file, source: await readFile(path, "utf8") });
  }
  return sources;
}

/** The family `source` defines, checked against the contract. */
export async function loadOperatorFamily(source: OperatorFamilySource): Promise<TaskFamily> {
  const id = FAMILY_FILE.exec(source.file)?.[1];
  if (id === undefined) throw new Error(`${source.file}: not <family id>.mjs`);
  const url = `data:text/javascript;base64,${Buffer.from(source.source, "utf8").toString("base64")}`;
  const loaded = ((await import(/* @vite-ignore */ url)) as { default?: Partial<TaskFamily> })
    .default;
  for (const field of ["title", "instructions", "bounds"] as const) {
    if (typeof loaded?.[field] !== "string" || loaded[field] === "") {
      throw new Error(`${source.file}: ${field} is not text`);
    }
  }
  if (typeof loaded?.generate !== "function" || typeof loaded.check !== "function") {
    throw new Error(`${source.file}: generate and check must be functions`);
  }
  return {
    id,
    title: loaded.title!,
    instructions: loaded.instructions!,
    bounds: loaded.bounds!,
    generate: loaded.generate.bind(loaded),
    check: loaded.check.bind(loaded),
  };
}
