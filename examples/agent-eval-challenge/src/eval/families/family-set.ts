/**
 * The family set a service plans and an evaluator scores: the reference families, then the
 * operator's own (a directory mounted at deploy time, TASK_FAMILIES_DIR). Its revision id is the
 * sha256 of the canonical description: the reference families' ids, texts and version, and each
 * operator file's name and sha256. The plan names it, the evaluator measures it, so a result
 * and a replay both say exactly which families ran, the private ones included, without showing
 * their code.
 */
import { canonicalDigest, sha256Hex } from "../../crypto/index.js";
import { loadOperatorFamily, type OperatorFamilySource } from "./operator-families.js";
import { REFERENCE_FAMILIES } from "./reference-families.js";
import type { TaskFamily } from "./task-family.js";

/** Bump when a reference generator or checker changes behaviour (its texts are digested). */
export const REFERENCE_FAMILIES_VERSION = 1;
export const FAMILY_SET_SCHEMA_VERSION = "task-families/v1";

export interface FamilySet {
  revision_id: string;
  families: readonly TaskFamily[];
  /** The operator's files, exactly as hashed (released sealed to the evaluator with the seed). */
  operatorSources: readonly OperatorFamilySource[];
}

/** The set of the reference families plus `operatorSources` (loaded from their exact bytes). */
export async function loadFamilySet(
  operatorSources: readonly OperatorFamilySource[] = [],
): Promise<FamilySet> {
  const operator = [];
  for (const source of operatorSources) operator.push(await loadOperatorFamily(source));
  const families = [...REFERENCE_FAMILIES, ...operator];
  const ids = new Set<string>();
  for (const family of families) {
    if (ids.has(family.id)) throw new Error(`task family ${family.id} is defined twice`);
    ids.add(family.id);
  }
  return {
    revision_id: canonicalDigest({
      schema_version: FAMILY_SET_SCHEMA_VERSION,
      reference_version: REFERENCE_FAMILIES_VERSION,
      reference: REFERENCE_FAMILIES.map(({ id, title, instructions, bounds }) => ({
        id,
        title,
        instructions,
        bounds,
      })),
      operator: operatorSources.map(({ file, source }) => ({ file, sha256: sha256Hex(source) })),
    }),
    families,
    operatorSources,
  };
}
