import { challengeContainerName } from "../runtime/challenge-containers.js";

/** The names an update gives the new container and the old one while they run side by side. */
export const nextName = (slug: string) => `${challengeContainerName(slug)}-next`;
export const drainingName = (slug: string) => `${challengeContainerName(slug)}-old`;

/** Is the container `name` (as Docker lists it, maybe with its leading slash) an update's `-next` or `-old`? */
export function isUpdateLeftover(slug: string, name: string): boolean {
  const bare = name.replace(/^\//, "");
  return bare === nextName(slug) || bare === drainingName(slug);
}
