// MRTD allow-lists come from configuration (MEASUREMENT_ALLOWLIST) as hex strings. They are
// normalised to lowercase so "AB.." and "ab.." name the same measurement, and a malformed entry
// is a configuration error raised at once: silently ignoring it would turn a typo into a
// verifier that accepts nothing (or, worse, hide which entry was meant).

const MRTD_HEX = /^[0-9a-f]{96}$/;

export function normalizeMeasurementAllowList(measurements: readonly string[]): readonly string[] {
  return measurements.map((entry) => {
    const normalized = entry.trim().toLowerCase();
    if (!MRTD_HEX.test(normalized)) {
      throw new RangeError(`measurement allow-list entry is not a 48-byte hex MRTD: "${entry}"`);
    }
    return normalized;
  });
}
