#!/usr/bin/env bash
# Install the headless browser the console's end-to-end tests drive: Debian's Chromium, its
# matching chromedriver and a CJK font (so Chinese, Japanese and Korean render, not as boxes).
# Browsers fetched by a tool's own installer (Selenium Manager, Playwright) cannot be downloaded
# here, so the tests use the distribution's packages through apt.
#
#   scripts/browser.sh        install what is missing (idempotent: nothing to do -> no apt at all)
#   scripts/browser.sh check  exit 1 unless everything is installed
#
# apt needs root: CI runs as root; elsewhere the script uses `sudo -n` when it may, else it says
# what to run.
set -euo pipefail

CHROMIUM="${MNEMO_CHROMIUM:-/usr/bin/chromium}"
CHROMEDRIVER="${MNEMO_CHROMEDRIVER:-/usr/bin/chromedriver}"
PACKAGES=(chromium chromium-driver fonts-wqy-microhei)

installed() {
  [[ -x "$CHROMIUM" && -x "$CHROMEDRIVER" ]] || return 1
  # the CJK font: fontconfig knows a font for Chinese
  command -v fc-list >/dev/null && [[ -n "$(fc-list :lang=zh family 2>/dev/null)" ]]
}

if [[ "${1:-install}" == "check" ]]; then
  installed
  exit
fi

if installed; then
  exit 0
fi

if ! command -v apt-get >/dev/null; then
  echo "browser.sh: no apt-get here: install Chromium, chromedriver and a CJK font yourself and set" \
       "MNEMO_CHROMIUM / MNEMO_CHROMEDRIVER to their paths" >&2
  exit 2
fi

if [[ "$(id -u)" -eq 0 ]]; then
  SUDO=()
elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
  SUDO=(sudo -n)
else
  echo "browser.sh: installing ${PACKAGES[*]} needs root: run" >&2
  echo "  sudo apt-get update && sudo apt-get install -y --no-install-recommends ${PACKAGES[*]}" >&2
  exit 2
fi

echo "browser.sh: installing ${PACKAGES[*]} from the distribution's packages (about a minute, once)" >&2
export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" apt-get update -q >&2
"${SUDO[@]}" apt-get install -y -q --no-install-recommends "${PACKAGES[@]}" >&2
installed || { echo "browser.sh: the install finished but $CHROMIUM or $CHROMEDRIVER or a CJK font is missing" >&2; exit 2; }
"$CHROMIUM" --version >&2
