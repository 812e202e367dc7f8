#!/usr/bin/env bash
# Rebuilds the viewer's graph libraries in src/viewer_page/, all MIT, from the npm registry at
# the versions package.json pins (package-lock.json fixes the whole tree): graph-model.js
# (graphology) and graph-lib.js (sigma.js and @sigma/node-image, drawing with WebGL). The
# bundles are committed, so neither building nor running Atlas needs npm; run this only to
# change a library.
set -euo pipefail
cd "$(dirname "$0")"
npm ci --no-audit --no-fund
# bundle ENTRY OUT WHAT PACKAGES…: ENTRY bundled into ../src/viewer_page/OUT, headed by what it
# is and the packages' versions and licence.
bundle() {
  local entry=$1 out=../src/viewer_page/$2 what=$3
  shift 3
  local versions
  versions=$(node -e 'const fs = require("fs"); for (const p of process.argv.slice(1)) console.log(" * " + p + " " + JSON.parse(fs.readFileSync("node_modules/" + p + "/package.json")).version)' "$@")
  {
    echo "/* $what of Atlas's viewer, bundled by crates/faces/atlas-server/viewer/build.sh:"
    echo "$versions"
    echo " * each under the MIT license, Copyright (c) their authors (see each package's LICENSE). */"
    npx esbuild "$entry" --bundle --minify --format=iife --target=es2020 --legal-comments=eof \
      --define:process.env.NODE_ENV='"production"' --log-level=warning
  } > "$out"
  echo "wrote $out ($(wc -c < "$out") bytes)"
}
bundle model.js graph-model.js "The graph model" graphology
bundle lib.js graph-lib.js "The WebGL graph drawing library" sigma @sigma/node-image
