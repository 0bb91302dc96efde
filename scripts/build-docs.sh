#!/usr/bin/env bash
# The Redoc page of the contract, self-contained: scripts and styles inline (--inlineBundle), and the
# "API docs by" badge's logo, which Redoc would fetch from a CDN, replaced by an inline image.
set -euo pipefail
out=${1:-docs/api.html}
log=$(mktemp)
if ! REDOCLY_TELEMETRY=off node_modules/.bin/redocly build-docs generated/openapi.json --inlineBundle -o "$out" >"$log" 2>&1; then
  cat "$log" >&2
  rm -f "$log"
  exit 1
fi
rm -f "$log"
logo="data:image/svg+xml,%3Csvg xmlns=%27http://www.w3.org/2000/svg%27 width=%2748%27 height=%2712%27%3E%3Ctext y=%2710%27 font-size=%2710%27 font-family=%27sans-serif%27%3ERedocly%3C/text%3E%3C/svg%3E"
sed -i -E "s#https://cdn\.redoc\.ly/redoc/logo-mini(-full)?\.svg#${logo}#g" "$out"
if grep -q 'cdn\.redoc\.ly' "$out"; then
  echo "build-docs: the page still refers to cdn.redoc.ly" >&2
  exit 1
fi
echo "$out"
