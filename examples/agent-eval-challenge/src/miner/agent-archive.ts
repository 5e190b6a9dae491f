/**
 * The agent a miner submits: a directory (packed into a reproducible ZIP, so the same files give
 * the same artifact sha256) or a ready ZIP. Caches, VCS folders and dotfiles stay out of the
 * archive; the challenge's own limits (1 MiB, its path rules) are checked by the challenge.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { zipFiles } from "@platform/challenge-sdk/zip";
import { MinerError } from "./challenge-client.js";

const SKIPPED = new Set(["__pycache__", "node_modules", ".git", ".venv", "venv"]);

function filesUnder(root: string, dir: string = root): { path: string; data: Buffer }[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => !entry.name.startsWith(".") && !SKIPPED.has(entry.name))
    .flatMap((entry) => {
      const full = join(dir, entry.name);
      if (entry.isDirectory()) return filesUnder(root, full);
      if (!entry.isFile()) return []; // symlinks and the like are never packed
      return [{ path: relative(root, full).split(sep).join("/"), data: readFileSync(full) }];
    });
}

/** The ZIP bytes of the agent at `path` (a directory or a .zip file). */
export function agentArchive(path: string): Buffer {
  let stats: ReturnType<typeof statSync>;
  try {
    stats = statSync(path);
  } catch {
    throw new MinerError(`no agent at ${path}: give a directory or a .zip`);
  }
  if (stats.isFile()) return readFileSync(path);
  const files = filesUnder(path);
  if (!files.some((file) => file.path === "agent.py")) {
    throw new MinerError(`${path} has no agent.py: the entry point the eval worker runs`);
  }
  return zipFiles(files);
}
