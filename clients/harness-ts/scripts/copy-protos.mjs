// Copies the harness protocol's .proto files from the repository's protos/ into
// this package, so that the package stands alone. With --check, only compares
// them and exits 1 when a copy differs from its source.
import { mkdirSync, readFileSync, writeFileSync, existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const packageRoot = join(here, "..");
const source = join(packageRoot, "..", "..", "protos");
export const FILES = ["hemra/v1/common.proto", "hemra/v1/harness_service.proto"];

function main(check) {
  if (!existsSync(source)) {
    console.error(`copy-protos: no ${source}: run it inside the HEMRA repository`);
    process.exit(2);
  }
  const drifted = [];
  for (const file of FILES) {
    const want = readFileSync(join(source, file));
    const target = join(packageRoot, "proto", file);
    const have = existsSync(target) ? readFileSync(target) : null;
    if (have !== null && have.equals(want)) continue;
    if (check) {
      drifted.push(file);
    } else {
      mkdirSync(dirname(target), { recursive: true });
      writeFileSync(target, want);
    }
  }
  if (drifted.length) {
    console.error(`copy-protos: proto/${drifted.join(", proto/")} differ from protos/: run npm run protos`);
    process.exit(1);
  }
}

main(process.argv.includes("--check"));
