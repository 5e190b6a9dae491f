// The running validator's last submissions, as a file beside its embedded database. The
// embedded database is one process's only (its data-dir lock), so `platform validator status`
// cannot open it while `platform validator run` holds it (a Compose service, a systemd unit):
// the run writes its newest submissions here after each outcome, and status reads them instead.
import { readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { SubmissionRecord } from "@platform/chain";

/** The file's name inside the validator's data dir. */
export const STATUS_FILE = "status.json";

/** What the file holds: when it was written, by whom, and the newest submissions first. */
export interface ValidatorStatusFile {
  writtenAt: Date;
  pid: number;
  rows: SubmissionRecord[];
}

/** Replace the file at once (a reader never sees half of it). */
export async function writeStatusFile(dataDir: string, rows: SubmissionRecord[]): Promise<void> {
  const file = join(dataDir, STATUS_FILE);
  const temporary = `${file}.${process.pid}.tmp`;
  const body = JSON.stringify(
    { written_at: new Date().toISOString(), pid: process.pid, rows },
    (_key, value) => (typeof value === "bigint" ? value.toString() : value),
  );
  await writeFile(temporary, `${body}\n`, { mode: 0o644 });
  await rename(temporary, file);
}

/** The file, its dates and version keys revived; null when there is none (nothing sent yet). */
export async function readStatusFile(dataDir: string): Promise<ValidatorStatusFile | null> {
  let text: string;
  try {
    text = await readFile(join(dataDir, STATUS_FILE), "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
  const parsed = JSON.parse(text) as {
    written_at: string;
    pid: number;
    rows: (Omit<SubmissionRecord, "createdAt" | "updatedAt" | "versionKey"> & {
      createdAt: string;
      updatedAt: string;
      versionKey: string;
    })[];
  };
  return {
    writtenAt: new Date(parsed.written_at),
    pid: parsed.pid,
    rows: parsed.rows.map((row) => ({
      ...row,
      createdAt: new Date(row.createdAt),
      updatedAt: new Date(row.updatedAt),
      versionKey: BigInt(row.versionKey),
    })),
  };
}
