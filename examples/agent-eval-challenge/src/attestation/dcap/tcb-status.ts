// The TCB statuses Intel's TCB info and QE identity assign, and how two of them combine: the
// platform's level and the QE's level (and the TDX module's) each give one, the quote gets the
// worst, with every advisory id of both.

export const TCB_STATUSES = [
  "UpToDate",
  "SWHardeningNeeded",
  "ConfigurationNeeded",
  "ConfigurationAndSWHardeningNeeded",
  "OutOfDate",
  "OutOfDateConfigurationNeeded",
  "Revoked",
] as const;
export type TcbStatus = (typeof TCB_STATUSES)[number];

export interface TcbVerdict {
  readonly status: TcbStatus;
  readonly advisoryIds: readonly string[];
}

export function isTcbStatus(value: unknown): value is TcbStatus {
  return typeof value === "string" && (TCB_STATUSES as readonly string[]).includes(value);
}

/**
 * The worse status of the two (the list above is ordered by severity), advisories merged; as
 * Intel's QVL converges them, a configuration need survives being out of date
 * (ConfigurationNeeded with OutOfDate is OutOfDateConfigurationNeeded, not plain OutOfDate).
 */
export function mergeTcb(a: TcbVerdict, b: TcbVerdict): TcbVerdict {
  const severity = (s: TcbStatus) => TCB_STATUSES.indexOf(s);
  const advisoryIds = [...a.advisoryIds];
  for (const id of b.advisoryIds) if (!advisoryIds.includes(id)) advisoryIds.push(id);
  const worse = severity(b.status) > severity(a.status) ? b.status : a.status;
  const needsConfiguration = [a.status, b.status].some((s) => s.startsWith("Configuration"));
  const status =
    worse === "OutOfDate" && needsConfiguration ? "OutOfDateConfigurationNeeded" : worse;
  return { status, advisoryIds };
}
