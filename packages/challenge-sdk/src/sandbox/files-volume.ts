import type Docker from "dockerode";
import { ignoreMissing } from "./docker-errors.js";
import { WORKSPACE } from "./hardened-container.js";
import { retryWhileInUse } from "./in-use-retry.js";
import { PLATFORM_LABELS } from "./platform-labels.js";
import { type PlacedFile, taskFilesArchive } from "./task-files.js";

/**
 * A task's files reach its container through a volume. Docker cannot write into a tmpfs or a
 * read-only root before the container starts (the archive lands under the mount, invisible
 * once it is mounted: moby/moby#22020, checked on Docker 20.10), so the files go into a
 * per-task volume through a staging container that is never started, and the task mounts that
 * volume read-only at /workspace.
 */

/** Options of {@link stageFilesVolume}. */
export interface FilesVolumeOptions {
  /** The volume's name (the task container's name serves). */
  name: string;
  /** The staging container's image: the task's own, so no other image is needed. */
  image: string;
  files: readonly PlacedFile[];
  /** The task's labels; the `platform.role` of each helper is set here. */
  labels: Record<string, string>;
}

/** The never-started container that fills the files volume `name`. */
export function stagingContainerName(name: string): string {
  return `${name}-staging`;
}

/**
 * Creates the files volume and fills it with `files` under /workspace, through a staging
 * container removed before this returns. Rejects with Docker's error; what it created is
 * removed then too.
 * @example const volume = await stageFilesVolume(docker, { name, image, files, labels });
 */
export async function stageFilesVolume(
  docker: Docker,
  options: FilesVolumeOptions,
): Promise<string> {
  const { name } = options;
  const labels = (role: string) => ({ ...options.labels, [PLATFORM_LABELS.role]: role });
  try {
    await docker.createVolume({ Name: name, Labels: labels("files") });
    // The staging container only gives putArchive a writable path into the volume.
    const staging = await docker.createContainer({
      name: stagingContainerName(name),
      Image: options.image,
      Entrypoint: ["/platform-staging-never-started"],
      Labels: labels("staging"),
      NetworkDisabled: true,
      HostConfig: {
        NetworkMode: "none",
        Mounts: [{ Type: "volume", Source: name, Target: WORKSPACE }],
      },
    });
    try {
      await staging.putArchive(taskFilesArchive(options.files), { path: WORKSPACE });
    } finally {
      await ignoreMissing(() => staging.remove({ force: true })).catch(() => {});
    }
    return name;
  } catch (error) {
    await removeFilesVolume(docker, name);
    throw error;
  }
}

/**
 * Removes a files volume and any staging container a failed placement left, retrying while
 * the volume is still in use (`IN_USE_RETRY`). Never throws: true when both are gone, false
 * when something is left for a reaper.
 */
export async function removeFilesVolume(docker: Docker, name: string): Promise<boolean> {
  try {
    await ignoreMissing(() =>
      docker.getContainer(stagingContainerName(name)).remove({ force: true }),
    );
    return await retryWhileInUse(() => ignoreMissing(() => docker.getVolume(name).remove()));
  } catch {
    return false;
  }
}
