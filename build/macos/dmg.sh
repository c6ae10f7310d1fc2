#!/usr/bin/env bash
# A compressed .dmg holding Orkas.app and a link to /Applications (drag to install).
# Usage: build/macos/dmg.sh path/to/Orkas.app path/to/Orkas.dmg   (run by build/build.py on macOS)
set -euo pipefail
app=$1
dmg=$2
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
cp -R "$app" "$stage/"
ln -s /Applications "$stage/Applications"
rm -f "$dmg"
hdiutil create -volname "Orkas" -srcfolder "$stage" -fs HFS+ -format UDZO -imagekey zlib-level=9 "$dmg"
if [[ -n "${ORKAS_MACOS_SIGN_IDENTITY:-}" ]]; then
    codesign --force --timestamp --sign "$ORKAS_MACOS_SIGN_IDENTITY" "$dmg"
fi
