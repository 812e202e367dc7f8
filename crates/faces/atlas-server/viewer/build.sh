#!/usr/bin/env bash
# Rebuilds src/viewer_page/graph-lib.js, the graph drawing library of the viewer (sigma.js with
# graphology and @sigma/node-image, all MIT), from the npm registry at the versions package.json
# pins (package-lock.json fixes the whole tree). The bundle is committed, so neither building nor
# running Atlas needs npm; run this only to change the library.
set -euo pipefail
cd "$(dirname "$0")"
npm ci --no-audit --no-fund
out=../src/viewer_page/graph-lib.js
versions=$(node -e 'const fs = require("fs"); for (const p of ["sigma", "graphology", "@sigma/node-image"]) console.log(" * " + p + " " + JSON.parse(fs.readFileSync("node_modules/" + p + "/package.json")).version)')
{
  echo "/* The graph drawing library of Atlas's viewer, bundled by crates/faces/atlas-server/viewer/build.sh:"
  echo "$versions"
  echo " * each under the MIT license, Copyright (c) their authors (see each package's LICENSE). */"
  npx esbuild lib.js --bundle --minify --format=iife --target=es2020 --legal-comments=eof \
    --define:process.env.NODE_ENV='"production"' --log-level=warning
} > "$out"
echo "wrote $out ($(wc -c < "$out") bytes)"
