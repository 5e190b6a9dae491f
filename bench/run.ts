// Runs every benchmark figure (or those named on the command line) and prints one JSON line
// each. Add a figure: write bench/figures/<name>.ts exporting a `Figure`, list it below.
//   npm run bench -- [name-substring ...]
import { type Figure, printFigure, withOtherLoad } from "./_figure.js";
import { agentEvalEventsFigure } from "./figures/agent-eval-events.js";
import { agentEvalThroughputFigure } from "./figures/agent-eval-throughput.js";
import { asyncContextFigure } from "./figures/async-context.js";
import { brokerFigure } from "./figures/broker.js";
import { chainMetagraphFigure, chainWeightsLatencyFigure } from "./figures/chain.js";
import { harnessOverheadFigure } from "./figures/harness-overhead.js";
import { httpKitFigure } from "./figures/http-kit.js";
import { masterRssFigure } from "./figures/master-rss.js";
import { proxyFigure } from "./figures/proxy.js";
import { proxyShapesFigure } from "./figures/proxy-shapes.js";
import { proxySseFigure } from "./figures/proxy-sse.js";
import { scoringThroughputFigure } from "./figures/scoring-throughput.js";
import { sdkSignedPoolFigure } from "./figures/sdk-signed-pool.js";
import { signedUploadPoolFigure } from "./figures/signed-upload-pool.js";
import { sr25519VerifyFigure } from "./figures/sr25519-verify.js";
import { sr25519VerifyPoolFigure } from "./figures/sr25519-verify-pool.js";
import {
  timeToWeightAgentEvalFigure,
  timeToWeightScoringFigure,
} from "./figures/time-to-weight.js";

const FIGURES: Figure[] = [
  sr25519VerifyFigure,
  sr25519VerifyPoolFigure,
  httpKitFigure,
  proxyFigure,
  asyncContextFigure,
  proxyShapesFigure,
  proxySseFigure,
  masterRssFigure,
  signedUploadPoolFigure,
  sdkSignedPoolFigure,
  brokerFigure,
  harnessOverheadFigure,
  scoringThroughputFigure,
  agentEvalThroughputFigure,
  agentEvalEventsFigure,
  timeToWeightScoringFigure,
  timeToWeightAgentEvalFigure,
  chainMetagraphFigure,
  chainWeightsLatencyFigure,
];

const filters = process.argv.slice(2);
// A filter that is a figure's whole name selects that figure alone (`proxy` is not also
// `proxy-sse`); any other filter selects every figure whose name contains it.
const matches = (name: string, filter: string) =>
  FIGURES.some((figure) => figure.name === filter) ? name === filter : name.includes(filter);
const selected = FIGURES.filter(
  (figure) => filters.length === 0 || filters.some((f) => matches(figure.name, f)),
);
if (selected.length === 0) {
  console.error(
    `no figure matches ${filters.join(" ")}; known: ${FIGURES.map((f) => f.name).join(", ")}`,
  );
  process.exit(2);
}
for (const figure of selected) {
  const [result, otherLoad] = await withOtherLoad(() => figure.run());
  printFigure(figure.name, otherLoad === undefined ? result : { ...result, other_load: otherLoad });
}
