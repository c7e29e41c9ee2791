#!/usr/bin/env bash
# Fetch a real Keycloak for the test suite, through Maven (no Docker needed): the authorization
# server whose tokens the OAuth tests use (tests/support/keycloak.py).
#
#   scripts/keycloak.sh fetch   download (once) and unpack (once); print the Keycloak home
#   scripts/keycloak.sh home    print the Keycloak home if already fetched, else exit 1
#
# Environment:
#   MNEMO_KEYCLOAK_VERSION  default 26.4.7 (the 26.x distributions on Maven Central need Java 21+;
#                           tests/support/keycloak.py finds one)
#   MNEMO_KEYCLOAK_CACHE    default <repo>/.cache/keycloak
# Only the home path goes to stdout; Maven's chatter goes to stderr.
set -euo pipefail

VERSION="${MNEMO_KEYCLOAK_VERSION:-26.4.7}"
ARTIFACT="org.keycloak:keycloak-quarkus-dist:${VERSION}:zip"
REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${MNEMO_KEYCLOAK_CACHE:-$REPO_ROOT/.cache/keycloak}"
HOME_DIR="$CACHE/keycloak-$VERSION"
MARKER="$HOME_DIR/.mnemo-complete"

die() { echo "keycloak.sh: $*" >&2; exit 2; }

java_home() {  # a JDK 21+ (Keycloak 26 refuses older ones): MNEMO_KEYCLOAK_JAVA_HOME, /usr/lib/jvm/*, JAVA_HOME
  local home version
  for home in "${MNEMO_KEYCLOAK_JAVA_HOME:-}" $(ls -d /usr/lib/jvm/*/ 2>/dev/null | sort -r) "${JAVA_HOME:-}"; do
    [[ -n "$home" && -x "$home/bin/java" ]] || continue
    version="$("$home/bin/java" -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -1)"
    if [[ -n "$version" && "$version" -ge 21 ]]; then echo "${home%/}"; return; fi
  done
  die "no JDK 21+ found (Keycloak 26 needs one): set MNEMO_KEYCLOAK_JAVA_HOME"
}

cmd_home() {
  [[ -f "$MARKER" && -x "$HOME_DIR/bin/kc.sh" ]] || { echo "keycloak.sh: not fetched yet ($HOME_DIR)" >&2; exit 1; }
  echo "$HOME_DIR"
}

cmd_fetch() {
  if [[ -f "$MARKER" ]]; then echo "$HOME_DIR"; return; fi
  command -v mvn >/dev/null 2>&1 || die "mvn not found (apt-get install maven)"
  mkdir -p "$CACHE"
  local zip="$CACHE/keycloak-quarkus-dist-$VERSION.zip"
  if [[ ! -s "$zip" ]]; then
    mvn -q -B dependency:copy -Dartifact="$ARTIFACT" -DoutputDirectory="$CACHE" -Dmdep.overWriteIfNewer=true >&2 \
      || die "could not fetch $ARTIFACT"
  fi
  local tmp
  tmp="$(mktemp -d "$CACHE/unpack.XXXXXX")"
  if command -v unzip >/dev/null 2>&1; then
    unzip -q -o "$zip" -d "$tmp"
  else
    python3 - "$zip" "$tmp" <<'PY'
import os, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    for info in z.infolist():
        path = z.extract(info, sys.argv[2])
        mode = (info.external_attr >> 16) & 0o777
        if mode:
            os.chmod(path, mode)
PY
  fi
  # build once (Quarkus augmentation, minutes on a loaded machine) so each test node starts with
  # `start --optimized`: an in-memory database, no health endpoints
  JAVA_HOME="$(java_home)" "$tmp/keycloak-$VERSION/bin/kc.sh" build --db=dev-mem >&2 || die "kc.sh build failed"
  rm -rf "$HOME_DIR"
  mv "$tmp/keycloak-$VERSION" "$HOME_DIR"
  rm -rf "$tmp" "$zip"
  touch "$MARKER"
  echo "$HOME_DIR"
}

case "${1:-}" in
  fetch) cmd_fetch ;;
  home) cmd_home ;;
  *) die "usage: $0 fetch|home" ;;
esac
