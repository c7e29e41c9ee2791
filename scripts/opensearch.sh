#!/usr/bin/env bash
# Fetch a real OpenSearch distribution for the test suite, through Maven (no Docker needed).
#
#   scripts/opensearch.sh fetch   download (once) and unpack (once); print the OpenSearch home
#   scripts/opensearch.sh home    print the OpenSearch home if already fetched, else exit 1
#
# Environment:
#   MNEMO_OPENSEARCH_VERSION  default 2.19.3 (2.19.x runs on Java 17; 3.x needs Java 21)
#   MNEMO_OPENSEARCH_CACHE    default <repo>/.cache/opensearch
#   JAVA_HOME                 used by OpenSearch if set; otherwise `java` on PATH
#
# The artifact is the integ-test-zip: core analyzers only (no analysis-common, no painless).
# Only the home path goes to stdout; Maven's chatter goes to stderr.
set -euo pipefail

VERSION="${MNEMO_OPENSEARCH_VERSION:-2.19.3}"
ARTIFACT="org.opensearch.distribution.integ-test-zip:opensearch:${VERSION}:zip"
REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${MNEMO_OPENSEARCH_CACHE:-$REPO_ROOT/.cache/opensearch}"
HOME_DIR="$CACHE/opensearch-$VERSION"
MARKER="$HOME_DIR/.mnemo-complete"

die() { echo "opensearch.sh: $*" >&2; exit 2; }

find_java() {
  if [[ -n "${JAVA_HOME:-}" && -x "$JAVA_HOME/bin/java" ]]; then echo "$JAVA_HOME/bin/java"; return; fi
  command -v java || true
}

cmd_home() {
  [[ -f "$MARKER" && -x "$HOME_DIR/bin/opensearch" ]] || { echo "opensearch.sh: not fetched yet ($HOME_DIR)" >&2; exit 1; }
  echo "$HOME_DIR"
}

unpack() {  # unpack ZIP into DIR, keeping the executable bits
  local zip="$1" dir="$2"
  if command -v unzip >/dev/null 2>&1; then
    unzip -q -o "$zip" -d "$dir"
  elif command -v python3 >/dev/null 2>&1; then
    python3 - "$zip" "$dir" <<'PY'
import os, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    for info in z.infolist():
        path = z.extract(info, sys.argv[2])
        mode = (info.external_attr >> 16) & 0o777
        if mode:
            os.chmod(path, mode)
PY
  else
    die "need unzip or python3 to unpack $zip"
  fi
}

cmd_fetch() {
  # Already there: no Maven, no Java start-up, just the path.
  if [[ -f "$MARKER" && -x "$HOME_DIR/bin/opensearch" ]]; then echo "$HOME_DIR"; return; fi

  local java; java="$(find_java)"
  [[ -n "$java" ]] || die "java not found (install a JDK 17+, e.g. openjdk-17-jdk-headless, or set JAVA_HOME)"
  command -v mvn >/dev/null 2>&1 || die "mvn not found (install Maven, e.g. apt-get install maven); it fetches $ARTIFACT"

  mkdir -p "$CACHE"
  # Serialise concurrent fetches (parallel test workers).
  if command -v flock >/dev/null 2>&1; then
    exec 9>"$CACHE/.lock"
    flock 9
    if [[ -f "$MARKER" && -x "$HOME_DIR/bin/opensearch" ]]; then echo "$HOME_DIR"; return; fi
  fi

  local zip="$CACHE/opensearch-$VERSION.zip"
  if [[ ! -s "$zip" ]]; then
    local dl="$CACHE/.download.$$"
    rm -rf "$dl"; mkdir -p "$dl"
    # -C: fail on checksum mismatch; -B/-q: no prompts, little output. dependency:copy resolves
    # through the local repository (~/.m2 or whatever settings.xml says) and copies the file out.
    if ! mvn -B -q -C -Dstyle.color=never dependency:copy \
        -Dartifact="$ARTIFACT" -DoutputDirectory="$dl" -Dmdep.overWriteReleases=true >&2; then
      rm -rf "$dl"
      die "mvn could not fetch $ARTIFACT (is Maven Central reachable? see the output above)"
    fi
    [[ -s "$dl/opensearch-$VERSION.zip" ]] || { rm -rf "$dl"; die "mvn succeeded but $dl/opensearch-$VERSION.zip is missing"; }
    mv -f "$dl/opensearch-$VERSION.zip" "$zip"
    rm -rf "$dl"
  fi

  local tmp="$CACHE/.unpack.$$"
  rm -rf "$tmp"; mkdir -p "$tmp"
  unpack "$zip" "$tmp" || { rm -rf "$tmp"; die "could not unpack $zip (corrupt? delete it and retry)"; }
  [[ -x "$tmp/opensearch-$VERSION/bin/opensearch" ]] || { rm -rf "$tmp"; die "unexpected zip layout in $zip"; }
  # World-readable so the unprivileged user the tests run OpenSearch as (when we are root) can read it.
  chmod -R a+rX "$tmp/opensearch-$VERSION"
  touch "$tmp/opensearch-$VERSION/.mnemo-complete"
  rm -rf "$HOME_DIR"
  mv "$tmp/opensearch-$VERSION" "$HOME_DIR"
  rm -rf "$tmp"
  echo "$HOME_DIR"
}

case "${1:-}" in
  fetch) cmd_fetch ;;
  home) cmd_home ;;
  *) echo "usage: $0 fetch|home" >&2; exit 64 ;;
esac
