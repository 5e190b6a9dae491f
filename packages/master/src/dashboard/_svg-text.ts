// Code points XML 1.0 allows (a lone surrogate is a code point outside them under the u flag).
const NOT_XML_CHAR = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;

/**
 * Text safe inside an XML element or a quoted attribute: characters XML cannot carry are
 * removed (a control character would make the whole document unparsable), whitespace runs
 * become one space, and the five markup characters become entities.
 */
export function xmlText(value: string): string {
  return value
    .replace(NOT_XML_CHAR, "")
    .replace(/\s+/g, " ")
    .replaceAll("&", "&amp;")
    .replaceAll("<", "&lt;")
    .replaceAll(">", "&gt;")
    .replaceAll('"', "&quot;")
    .replaceAll("'", "&apos;");
}

// Rough advance widths in em: SVG text does not wrap or clip, so the layout has to estimate.
function advance(codePoint: number, factor: number): number {
  if (codePoint >= 0x2e80) return 1; // CJK, emoji and friends are about one em wide
  if (codePoint === 0x20 || codePoint === 0x69 || codePoint === 0x6c || codePoint === 0x2e)
    return factor * 0.55;
  if (codePoint >= 0x41 && codePoint <= 0x5a) return factor * 1.15; // capitals
  return factor;
}

/**
 * Cut `value` (raw, before escaping) so that it fits `maxWidth` pixels at `fontSize`, ending with
 * "…" when cut. Works on code points, so a surrogate pair is never split. `factor` is the
 * average glyph width in em (about 0.55 for a system sans, 0.6 for monospace).
 */
export function fitText(value: string, maxWidth: number, fontSize: number, factor = 0.56): string {
  const text = value.replace(NOT_XML_CHAR, "").replace(/\s+/g, " ").trim();
  const chars = Array.from(text);
  const widths = chars.map((char) => advance(char.codePointAt(0)!, factor) * fontSize);
  if (widths.reduce((sum, w) => sum + w, 0) <= maxWidth) return text;
  const ellipsis = 0.9 * fontSize;
  let width = 0;
  let kept = 0;
  while (kept < chars.length && width + widths[kept]! + ellipsis <= maxWidth)
    width += widths[kept++]!;
  return `${chars.slice(0, kept).join("").trimEnd()}…`;
}

/** Estimated width (px) of `value` at `fontSize`, with the same model as {@link fitText}. */
export function textWidth(value: string, fontSize: number, factor = 0.56): number {
  return Array.from(value).reduce(
    (width, char) => width + advance(char.codePointAt(0)!, factor) * fontSize,
    0,
  );
}
