// Task families: generators and checkers of per-run instances (docs: "The task families").
export { type FamilySet, loadFamilySet } from "./family-set.js";
export { checkInstance, INSTANCE_SEED_BYTES, instanceInput } from "./instances.js";
export {
  MAX_OPERATOR_FAMILIES,
  MAX_OPERATOR_FAMILY_BYTES,
  type OperatorFamilySource,
  readOperatorFamilies,
} from "./operator-families.js";
export { REFERENCE_FAMILIES } from "./reference-families.js";
export { type SeededRandom, seededRandom } from "./seeded-random.js";
export type { TaskFamily } from "./task-family.js";
