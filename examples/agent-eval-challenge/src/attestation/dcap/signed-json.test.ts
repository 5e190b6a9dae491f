import { generateKeyPairSync, sign } from "node:crypto";
import { describe, expect, it } from "vitest";
import { DcapChainError } from "./dcap-error.js";
import { checkIssueWindow, checkJsonSignature, splitSignedJson } from "./signed-json.js";

const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
const signed = (raw: string) =>
  `{"tcbInfo":${raw},"signature":"${sign("sha256", Buffer.from(raw), { key: privateKey, dsaEncoding: "ieee-p1363" }).toString("hex")}"}`;
const code = (fn: () => unknown) => {
  try {
    fn();
    return "ok";
  } catch (error) {
    return error instanceof DcapChainError ? error.code : "threw";
  }
};

describe("Intel's signed JSON", () => {
  it("cuts out the exact signed bytes (whitespace and key order kept) and checks them", () => {
    const raw = '{ "b":1, "a":"}{\\"", "n":{"x":[1,2]} }';
    const split = splitSignedJson(signed(raw), "tcbInfo", "tcb_info");
    expect(split.raw).toBe(raw);
    expect(code(() => checkJsonSignature(split, publicKey, "tcb_info"))).toBe("ok");
    const edited = { ...split, raw: raw.replace('"b":1', '"b":2') };
    expect(code(() => checkJsonSignature(edited, publicKey, "tcb_info"))).toBe(
      "tcb_info_signature_invalid",
    );
  });

  it("refuses bodies that are not one signed member and a signature", () => {
    const body = signed('{"a":1}');
    expect(code(() => splitSignedJson("not json", "tcbInfo", "tcb_info"))).toBe(
      "tcb_info_malformed",
    );
    expect(code(() => splitSignedJson(body, "enclaveIdentity", "qe_identity"))).toBe(
      "qe_identity_malformed",
    );
    expect(
      code(() =>
        splitSignedJson(
          body.replace(/"signature":"[0-9a-f]+"/, '"signature":"ab"'),
          "tcbInfo",
          "tcb_info",
        ),
      ),
    ).toBe("tcb_info_malformed");
    // The signed member repeated: JSON.parse would show the second, the signature covers the first.
    const repeated = body.replace(',"signature"', ',"tcbInfo":{"a":2},"signature"');
    expect(code(() => splitSignedJson(repeated, "tcbInfo", "tcb_info"))).toBe("tcb_info_malformed");
  });

  it("holds documents to issueDate..nextUpdate", () => {
    const doc = { issueDate: "2025-06-19T10:00:00Z", nextUpdate: "2025-07-19T10:00:00Z" };
    expect(code(() => checkIssueWindow(doc, new Date("2025-06-20Z"), "tcb_info"))).toBe("ok");
    expect(code(() => checkIssueWindow(doc, new Date("2025-06-19T09:59:59Z"), "tcb_info"))).toBe(
      "tcb_info_expired",
    );
    expect(code(() => checkIssueWindow(doc, new Date("2025-07-19T10:00:01Z"), "tcb_info"))).toBe(
      "tcb_info_expired",
    );
    expect(
      code(() => checkIssueWindow({ ...doc, nextUpdate: "soon" }, new Date(), "tcb_info")),
    ).toBe("tcb_info_malformed");
  });
});
