// Intel signs its TCB info and QE identity as JSON: the PCS answers
// `{"tcbInfo":{…},"signature":"<r||s hex>"}`, and the signature covers the exact bytes of the
// inner object as they appear in the body. So the inner object is cut out of the body verbatim
// (never re-serialised), its signature checked by the signing certificate, and only then parsed.

import { type KeyObject, verify } from "node:crypto";
import { chainError } from "./dcap-error.js";

export interface SignedJson {
  /** The exact signed bytes. */
  readonly raw: string;
  /** P-256 r||s. */
  readonly signature: Buffer;
}

/** `name` prefixes the codes ("tcb_info", "qe_identity"); `key` names the signed member. */
export function splitSignedJson(body: string, key: string, name: string): SignedJson {
  const malformed = () =>
    chainError(`${name}_malformed`, `the ${name.replace(/_/g, " ")} body is not signed JSON`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    throw malformed();
  }
  const outer = parsed as Record<string, unknown>;
  const signatureHex = outer?.signature;
  if (typeof signatureHex !== "string" || !/^[0-9a-fA-F]{128}$/.test(signatureHex)) {
    throw malformed();
  }
  const start = body.search(new RegExp(`^\\s*\\{\\s*"${key}"\\s*:\\s*\\{`));
  if (start !== 0) throw malformed();
  const open = body.indexOf("{", body.indexOf(`"${key}"`));
  const end = matchingBrace(body, open);
  if (end < 0) throw malformed();
  const raw = body.slice(open, end + 1);
  // The member the signature covers must be the member everyone reads: a body that repeats the
  // key (JSON.parse keeps the last) would show one object and sign another.
  if (JSON.stringify(JSON.parse(raw)) !== JSON.stringify(outer[key])) throw malformed();
  return { raw, signature: Buffer.from(signatureHex, "hex") };
}

/** Index of the brace closing the object opened at `open`, aware of strings; -1 if none. */
function matchingBrace(text: string, open: number): number {
  let depth = 0;
  let inString = false;
  for (let i = open; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === "{") depth++;
    else if (c === "}" && --depth === 0) return i;
  }
  return -1;
}

export function checkJsonSignature(signed: SignedJson, key: KeyObject, name: string): void {
  let valid = false;
  try {
    valid = verify(
      "sha256",
      Buffer.from(signed.raw, "utf8"),
      { key, dsaEncoding: "ieee-p1363" },
      signed.signature,
    );
  } catch {
    valid = false;
  }
  if (!valid) {
    throw chainError(
      `${name}_signature_invalid`,
      `the ${name.replace(/_/g, " ")} is not signed by its signing certificate`,
    );
  }
}

/** issueDate..nextUpdate of a signed JSON document, at `now`. */
export function checkIssueWindow(
  doc: { issueDate: string; nextUpdate: string },
  now: Date,
  name: string,
): void {
  const issued = new Date(doc.issueDate);
  const next = new Date(doc.nextUpdate);
  if (Number.isNaN(issued.getTime()) || Number.isNaN(next.getTime())) {
    throw chainError(`${name}_malformed`, `the ${name.replace(/_/g, " ")} dates do not parse`);
  }
  if (now < issued || now > next) {
    throw chainError(
      `${name}_expired`,
      `the ${name.replace(/_/g, " ")} is valid ${doc.issueDate} to ${doc.nextUpdate}, ` +
        `not at ${now.toISOString()}`,
    );
  }
}
