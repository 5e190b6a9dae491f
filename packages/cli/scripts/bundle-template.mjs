// Copy ../../templates/challenge into dist/template, so the published CLI carries the template
// `platform challenge create` writes and `platform dev` runs (tsup empties dist/ first, so this
// runs after it). The skip list matches src/commands/_template.ts.
import { cpSync, existsSync, rmSync } from "node:fs";
import { basename } from "node:path";
import { fileURLToPath } from "node:url";

const from = fileURLToPath(new URL("../../../templates/challenge/", import.meta.url));
const to = fileURLToPath(new URL("../dist/template/", import.meta.url));
const skip = new Set(["node_modules", "dist", ".platform", "package-lock.json", ".DS_Store"]);

if (!existsSync(`${from}package.json`)) {
  console.error(`bundle-template: no template at ${from}`);
  process.exit(1);
}
rmSync(to, { recursive: true, force: true });
cpSync(from, to, {
  recursive: true,
  filter: (path) => !skip.has(basename(path)) && !path.endsWith(".tsbuildinfo"),
});
console.log(`bundle-template: ${from} -> ${to}`);
