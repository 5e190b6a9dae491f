// A local PCCS for tests: a real HTTP server speaking the paths, query parameters and issuer
// chain headers of Intel's PCS v4 API, serving given collateral. It can be switched to fail
// (500), to hang (past any client timeout), and counts what it was asked. Private to tests.

import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { DcapCollateral } from "./collateral.js";

export interface TestPccs {
  readonly url: string;
  readonly requests: string[];
  mode: "up" | "error" | "hang";
  /** false: answer the PCCS-only rootcacrl path 404, as Intel's PCS does. */
  pccsPaths: boolean;
  collateral: DcapCollateral;
  /** The FMSPC (uppercase hex) this PCCS has TCB info for. */
  fmspc: string;
  close(): Promise<void>;
}

export async function startTestPccs(collateral: DcapCollateral, fmspc: string): Promise<TestPccs> {
  const hanging = new Set<() => void>();
  const state = {
    mode: "up" as TestPccs["mode"],
    collateral,
    fmspc: fmspc.toUpperCase(),
    pccsPaths: true,
  };
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://pccs");
    requests.push(`${url.pathname}${url.search}`);
    if (state.mode === "hang") {
      hanging.add(() => res.destroy());
      return;
    }
    if (state.mode === "error") {
      res.writeHead(500).end("internal error");
      return;
    }
    const c = state.collateral;
    const chain = (pem: string) => encodeURIComponent(pem);
    switch (url.pathname) {
      case "/tdx/certification/v4/tcb":
        if (url.searchParams.get("fmspc") !== state.fmspc) {
          res.writeHead(404).end();
          return;
        }
        res
          .writeHead(200, {
            "content-type": "application/json",
            "TCB-Info-Issuer-Chain": chain(c.tcbInfoIssuerChain),
          })
          .end(c.tcbInfoBody);
        return;
      case "/tdx/certification/v4/qe/identity":
        res
          .writeHead(200, {
            "content-type": "application/json",
            "SGX-Enclave-Identity-Issuer-Chain": chain(c.qeIdentityIssuerChain),
          })
          .end(c.qeIdentityBody);
        return;
      case "/sgx/certification/v4/pckcrl":
        if (
          url.searchParams.get("ca") !== "platform" ||
          url.searchParams.get("encoding") !== "der"
        ) {
          res.writeHead(400).end();
          return;
        }
        res
          .writeHead(200, {
            "content-type": "application/pkix-crl",
            "SGX-PCK-CRL-Issuer-Chain": chain(c.pckCrlIssuerChain),
          })
          .end(c.pckCrl);
        return;
      case "/sgx/certification/v4/rootcacrl":
        if (!state.pccsPaths) {
          res.writeHead(404).end();
          return;
        }
        // PCCS serves the root CA CRL as hex text.
        res.writeHead(200, { "content-type": "text/plain" }).end(c.rootCaCrl.toString("hex"));
        return;
      case "/IntelSGXRootCA.der":
        // Intel's distribution point: DER.
        res.writeHead(200, { "content-type": "application/pkix-crl" }).end(c.rootCaCrl);
        return;
      default:
        res.writeHead(404).end();
    }
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  const pccs: TestPccs = {
    url: `http://127.0.0.1:${port}`,
    requests,
    get mode() {
      return state.mode;
    },
    set mode(mode) {
      state.mode = mode;
    },
    get collateral() {
      return state.collateral;
    },
    set collateral(value) {
      state.collateral = value;
    },
    get pccsPaths() {
      return state.pccsPaths;
    },
    set pccsPaths(value) {
      state.pccsPaths = value;
    },
    get fmspc() {
      return state.fmspc;
    },
    set fmspc(value) {
      state.fmspc = value.toUpperCase();
    },
    async close() {
      for (const destroy of hanging) destroy();
      server.closeAllConnections();
      server.close();
      await once(server, "close");
    },
  };
  return pccs;
}
