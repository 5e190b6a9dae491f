// JSON Schema (as an OpenAPI document carries it) -> fast-check arbitraries of valid values, and
// the hostile values the fuzz suite mixes in. Kept small on purpose: sizes are capped so a run
// stays a few seconds, and anything the converter does not understand becomes any JSON value
// (a fuzzer that guesses wrong still sends something the server must answer without a 5xx).
import fc from "fast-check";

export type JsonSchema = Record<string, unknown>;

/** Follows local `#/components/...` references of the document. */
export type RefResolver = (schema: JsonSchema) => JsonSchema;

export function refResolver(document: JsonSchema): RefResolver {
  return function resolve(schema) {
    let current = schema;
    for (let hops = 0; hops < 8 && typeof current["$ref"] === "string"; hops++) {
      const ref = current["$ref"] as string;
      if (!ref.startsWith("#/")) return {};
      let target: unknown = document;
      for (const part of ref.slice(2).split("/")) {
        target = (target as Record<string, unknown> | undefined)?.[part.replace(/~1/g, "/")];
      }
      current = (target as JsonSchema | undefined) ?? {};
    }
    return current;
  };
}

const MAX_DEPTH = 4;
const anyJson = fc.jsonValue({ maxDepth: 2 });

const num = (value: unknown): number | undefined =>
  typeof value === "number" && Number.isFinite(value) ? value : undefined;

function stringArbitrary(schema: JsonSchema): fc.Arbitrary<string> {
  const minLength = num(schema["minLength"]) ?? 0;
  const maxLength = Math.min(num(schema["maxLength"]) ?? minLength + 24, minLength + 40);
  if (typeof schema["pattern"] === "string") {
    try {
      const pattern = new RegExp(schema["pattern"]);
      // Only the DECLARED bounds filter a pattern's strings: the generator's own length cap
      // (maxLength above) may be shorter than every match (`^[0-9a-f]{64}$`), and a filter that
      // never passes spins fast-check forever, synchronously.
      const declaredMax = num(schema["maxLength"]);
      return fc
        .stringMatching(pattern)
        .filter(
          (s) => s.length >= minLength && (declaredMax === undefined || s.length <= declaredMax),
        );
    } catch {
      // A pattern JavaScript cannot compile: fall through to plain strings.
    }
  }
  switch (schema["format"]) {
    case "date-time":
      return fc
        .date({
          min: new Date("2000-01-01T00:00:00Z"),
          max: new Date("2100-01-01T00:00:00Z"),
          noInvalidDate: true,
        })
        .map((d) => d.toISOString());
    case "uri":
      return fc.webUrl();
    case "uuid":
      return fc.uuid();
    case "email":
      return fc.emailAddress();
  }
  return fc.string({ minLength, maxLength });
}

/** Valid values of `schema` (as well as a small converter can tell). */
export function validValueOf(
  schema: JsonSchema | undefined,
  resolve: RefResolver,
  depth = 0,
): fc.Arbitrary<unknown> {
  if (!schema || depth > MAX_DEPTH) return fc.constant(null);
  const s = resolve(schema);
  if ("const" in s) return fc.constant(s["const"]);
  if (Array.isArray(s["enum"]) && s["enum"].length > 0) return fc.constantFrom(...s["enum"]);
  const union = (s["anyOf"] ?? s["oneOf"]) as JsonSchema[] | undefined;
  if (Array.isArray(union) && union.length > 0) {
    return fc.oneof(...union.map((option) => validValueOf(option, resolve, depth + 1)));
  }
  if (Array.isArray(s["allOf"]) && s["allOf"].length > 0) {
    return validValueOf(s["allOf"][0] as JsonSchema, resolve, depth + 1);
  }
  const type = s["type"];
  if (Array.isArray(type)) {
    return fc.oneof(...type.map((t) => validValueOf({ ...s, type: t }, resolve, depth)));
  }
  switch (type) {
    case "string":
      return stringArbitrary(s);
    case "integer": {
      const exMin = num(s["exclusiveMinimum"]);
      const exMax = num(s["exclusiveMaximum"]);
      const min = Math.ceil(num(s["minimum"]) ?? (exMin !== undefined ? exMin + 1 : -1_000));
      const max = Math.floor(num(s["maximum"]) ?? (exMax !== undefined ? exMax - 1 : min + 10_000));
      return max >= min ? fc.integer({ min, max }) : fc.constant(min);
    }
    case "number": {
      const min = num(s["minimum"]) ?? num(s["exclusiveMinimum"]) ?? -1e6;
      const max = num(s["maximum"]) ?? num(s["exclusiveMaximum"]) ?? min + 1e6;
      return fc
        .double({ min, max, noNaN: true, noDefaultInfinity: true })
        .filter(
          (n) =>
            (num(s["exclusiveMinimum"]) === undefined || n > (s["exclusiveMinimum"] as number)) &&
            (num(s["exclusiveMaximum"]) === undefined || n < (s["exclusiveMaximum"] as number)),
        );
    }
    case "boolean":
      return fc.boolean();
    case "null":
      return fc.constant(null);
    case "array": {
      const minLength = num(s["minItems"]) ?? 0;
      const maxLength = Math.min(num(s["maxItems"]) ?? minLength + 3, minLength + 4);
      return fc.array(validValueOf(s["items"] as JsonSchema | undefined, resolve, depth + 1), {
        minLength,
        maxLength,
      });
    }
    case "object":
      return objectOf(s, resolve, depth);
  }
  if (s["properties"]) return objectOf(s, resolve, depth);
  return anyJson;
}

function objectOf(s: JsonSchema, resolve: RefResolver, depth: number): fc.Arbitrary<unknown> {
  const properties = (s["properties"] ?? {}) as Record<string, JsonSchema>;
  const names = Object.keys(properties);
  if (names.length === 0) {
    return fc.dictionary(
      fc.string({ minLength: 1, maxLength: 12 }),
      validValueOf(s["additionalProperties"] as JsonSchema | undefined, resolve, depth + 1),
      { maxKeys: 3 },
    );
  }
  const required = ((s["required"] ?? []) as string[]).filter((name) => name in properties);
  return fc.record(
    Object.fromEntries(
      names.map((name) => [name, validValueOf(properties[name], resolve, depth + 1)]),
    ),
    { requiredKeys: required },
  );
}

/** Strings no server should choke on: control characters, lone surrogates, bidi, markup, emoji. */
export const UNICODE_STRINGS = [
  "\u0000",
  "nul\u0000byte",
  "\uD800",
  "\uDFFF\uD800",
  "\u202Eevil\u202C",
  "😀🧪",
  "ﬀ\u0301\u0345",
  "\r\n\tline",
  "<script>alert(1)</script>",
  "'; drop table x; --",
  "$" + "{jndi:ldap://x}",
  "{{7*7}}",
  "İ",
] as const;

/** Path traversal spellings, raw and percent-encoded once or twice, for path parameters. */
export const TRAVERSAL_SEGMENTS = [
  "..",
  ".",
  "../../etc/passwd",
  "..%2f..%2fadmin",
  "%2e%2e",
  "%2e%2e%2f%2e%2e%2fadmin",
  "%252e%252e%252f",
  "..%5c..%5c",
  "....//",
  "%c0%ae%c0%ae",
  ";/admin",
  "%00",
  "a%2fb",
  "%",
  "%zz",
] as const;

/** A value of another JSON type than `schema` allows (or any value when it allows anything). */
export function wrongTypeOf(schema: JsonSchema | undefined, resolve: RefResolver) {
  const type = schema ? resolve(schema)["type"] : undefined;
  const all: [string, fc.Arbitrary<unknown>][] = [
    ["string", fc.string({ maxLength: 8 })],
    ["integer", fc.integer()],
    ["number", fc.constantFrom(1.5, -0, 1e308, -1e-308)],
    ["boolean", fc.boolean()],
    ["null", fc.constant(null)],
    ["array", fc.array(fc.integer(), { maxLength: 2 })],
    ["object", fc.constant({ a: 1 })],
  ];
  const allowed = new Set(Array.isArray(type) ? type : type ? [type] : []);
  if (allowed.has("number")) allowed.add("integer");
  const others = all.filter(([name]) => !allowed.has(name)).map(([, arb]) => arb);
  return others.length > 0 ? fc.oneof(...others) : anyJson;
}

/** Strings for hostile parameter and field values: unicode, traversal, huge, numeric edges. */
export function hostileString(hugeLength: number): fc.Arbitrary<string> {
  return fc.oneof(
    fc.constantFrom(...UNICODE_STRINGS),
    fc.constantFrom(...TRAVERSAL_SEGMENTS),
    fc.constant("A".repeat(hugeLength)),
    fc.constant("é".repeat(Math.floor(hugeLength / 2))),
    fc.constantFrom(
      "-1",
      "0",
      "1e999",
      "NaN",
      "Infinity",
      "9007199254740993",
      "0x10",
      "true",
      "[]",
    ),
    fc.string({ unit: "binary", maxLength: 16 }),
  );
}
