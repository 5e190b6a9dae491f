import type { DevChain } from "./_dev-chain.js";
import type { StartedDevMaster } from "./_dev-master.js";
import type { StartedChallenge } from "./_dev-start-challenges.js";

/** What `--json` prints once everything is ready. */
export interface DevReady {
  status: "ready";
  master_url: string;
  /** The master's admin listener (admin API, broker); admin_url is its sign-in page. */
  master_admin_url: string;
  admin_url: string;
  registry_url: string;
  weights_url: string;
  dashboard_url: string;
  admin_token: string;
  data_dir: string;
  /** The local chain and the master's validator on it; null with --no-chain. */
  chain: {
    url: string;
    netuid: number;
    /** The finney runtime the local chain serves (`spec424`, `spec393`). */
    runtime: string;
    validator_hotkey: string;
    /** Weights go in as timelocked commits, revealed an epoch later (finney's default). */
    commit_reveal: boolean;
    /** The master's view of its weights on chain. */
    weights_url: string;
  } | null;
  challenges: {
    slug: string;
    name: string;
    version: string;
    module: string;
    proxy_url: string;
    internal_url: string;
    challenge_token: string;
    /** Dev defaults applied and Docker problems found, as the banner prints them. */
    notes: string[];
  }[];
}

/** The ready report: every address a developer needs, and each challenge's. */
export function devReady(
  master: StartedDevMaster,
  dataDir: string,
  started: readonly StartedChallenge[],
  chain?: DevChain,
): DevReady {
  return {
    status: "ready",
    master_url: master.url,
    master_admin_url: master.adminUrl,
    admin_url: `${master.adminUrl}/admin`,
    registry_url: `${master.url}/v1/registry`,
    weights_url: `${master.url}/v1/weights/latest`,
    dashboard_url: `${master.url}/v1/challenges/dashboard.svg`,
    admin_token: master.adminToken,
    data_dir: dataDir,
    chain: chain
      ? {
          url: chain.url,
          netuid: chain.netuid,
          runtime: chain.runtime,
          validator_hotkey: chain.validatorHotkey,
          commit_reveal: chain.commitReveal,
          weights_url: `${master.url}/v1/weights/chain`,
        }
      : null,
    challenges: started.map((item) => ({
      slug: item.slug,
      name: item.name,
      version: item.version,
      module: item.module,
      proxy_url: item.proxyUrl,
      internal_url: item.internalUrl,
      challenge_token: item.challengeToken,
      notes: item.notes,
    })),
  };
}

/** The banner printed without `--json`: the addresses, then how to submit as a miner. */
export function devBanner(ready: DevReady, tokenFromEnv: boolean): string {
  const pad = (label: string) => `  ${label.padEnd(12)} `;
  const slugWidth = Math.max(...ready.challenges.map((c) => c.slug.length), 4);
  const slug = ready.challenges[0]?.slug ?? "<slug>";
  // The CLI's miner commands default to this address; any other needs saying.
  const master =
    ready.master_url === "http://127.0.0.1:8080" ? "" : ` --master ${ready.master_url}`;
  const lines = [
    "",
    "platform dev is ready (Ctrl-C stops everything)",
    "",
    `${pad("master")}${ready.master_url}`,
    `${pad("admin")}${ready.admin_url}  (sign in with the admin token; admin API and broker on this listener)`,
    `${pad("registry")}${ready.registry_url}`,
    `${pad("weights")}${ready.weights_url}`,
    ...(ready.chain
      ? [
          `${pad("chain")}${ready.chain.url}  (local subtensor, finney ${ready.chain.runtime} runtime, netuid ${ready.chain.netuid}, commit-reveal ${ready.chain.commit_reveal ? "on: weights are committed, then revealed an epoch later" : "off"})`,
          `${pad("on chain")}${ready.chain.weights_url}  (the master's validator ${ready.chain.validator_hotkey}; miners who score get a uid)`,
        ]
      : []),
    `${pad("dashboard")}${ready.dashboard_url}`,
    `${pad("admin token")}${tokenFromEnv ? "(from ADMIN_TOKEN / ADMIN_TOKEN_FILE)" : ready.admin_token}`,
    `${pad("data")}${ready.data_dir}`,
    "",
    "  challenges (public base through the master; direct address for debugging)",
    ...ready.challenges.flatMap((c) => [
      `    ${c.slug.padEnd(slugWidth)}  ${c.proxy_url}  (${c.name} ${c.version}, direct ${c.internal_url})`,
      // Under its challenge, so a default or a missing engine is read with what it affects.
      ...c.notes.map((note) => `    ${"".padEnd(slugWidth)}  note: ${note}`),
    ]),
    "",
    "  submit as a miner:",
    "    platform keys new",
    `    platform submit ${slug} <file>${master}`,
    `    platform status ${slug} <id> --watch${master}`,
    "",
  ];
  return lines.join("\n");
}
