// Copies the third-party files memdoctor's HTML report embeds from node_modules into
// report/assets/vendor/, where go:embed picks them up. Run after npm ci (see
// report/assets/README.md); commit what it writes, so go build never needs npm.
import { copyFileSync, mkdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const out = join(here, "..", "report", "assets", "vendor", "uplot");
const src = join(here, "node_modules", "uplot");
mkdirSync(out, { recursive: true });
for (const [from, to] of [
  ["dist/uPlot.iife.min.js", "uPlot.iife.min.js"],
  ["dist/uPlot.min.css", "uPlot.min.css"],
  ["LICENSE", "LICENSE"],
]) {
  copyFileSync(join(src, from), join(out, to));
}
const version = JSON.parse(readFileSync(join(src, "package.json"), "utf8")).version;
console.log(`vendored uplot ${version} into ${out}`);
