#!/usr/bin/env bash
# eslint on the item explorer's script (src/conceptcomb/leaderboard/explore/static/), at the
# versions packaging/eslint/package-lock.json pins (npm registry; node >= 18.18).
set -euo pipefail
cd "$(dirname "$0")/.."
npm ci --prefix packaging/eslint --no-audit --no-fund --loglevel=error
packaging/eslint/node_modules/.bin/eslint --max-warnings 0 \
  --config packaging/eslint/eslint.config.mjs src/conceptcomb/leaderboard/explore/static
