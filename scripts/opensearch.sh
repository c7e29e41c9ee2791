#!/usr/bin/env bash
# Fetch a real OpenSearch distribution for the test suite, through Maven (no Docker needed).
#
#   scripts/opensearch.sh fetch   download (once) and unpack (once); print the OpenSearch home
#   scripts/opensearch.sh home    print the OpenSearch home if already fetched, else exit 1
#
# Environment:
#   MNEMO_OPENSEARCH_VERSION  default 2.19.1 (2.19.x runs on Java 17; 3.x needs Java 21). 2.19.1 because
#                             it is the only 2.19 release whose k-NN plugin Maven Central serves
#                             (org.opensearch.plugin:opensearch-knn:2.19.1.0), and a plugin runs only on
#                             the exact version it was built for
#   MNEMO_OPENSEARCH_CACHE    default <repo>/.cache/opensearch
#   JAVA_HOME                 used by OpenSearch if set; otherwise `java` on PATH
#
# The artifact is the integ-test-zip: core analyzers only (no analysis-common, no painless). To it
# this script adds what the vector search needs (docs/aws.md, "Vectors"): the opensearch-knn plugin
# (its zip from Maven Central, installed with bin/opensearch-plugin) and the lang-painless module it
# extends, which Maven Central serves only as jars: modules/lang-painless is made of those jars, a
# plugin descriptor and a security policy. The k-NN zip carries no native libraries (faiss, nmslib),
# so only its Lucene engine and exact scoring work here; that is all Mnemo uses.
# Only the home path goes to stdout; Maven's chatter goes to stderr.
set -euo pipefail

VERSION="${MNEMO_OPENSEARCH_VERSION:-2.19.1}"
ARTIFACT="org.opensearch.distribution.integ-test-zip:opensearch:${VERSION}:zip"
KNN_ARTIFACT="org.opensearch.plugin:opensearch-knn:${VERSION}.0:zip"
REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${MNEMO_OPENSEARCH_CACHE:-$REPO_ROOT/.cache/opensearch}"
HOME_DIR="$CACHE/opensearch-$VERSION"
MARKER="$HOME_DIR/.mnemo-complete-knn"

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

painless_module() {  # HOME: build modules/lang-painless from the lang-painless jar and its dependencies
  local home="$1" work; work="$(mktemp -d "$CACHE/.painless.XXXXXX")"
  cat > "$work/pom.xml" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>
  <groupId>mnemo.test</groupId><artifactId>painless-module</artifactId><version>1</version>
  <dependencies><dependency><groupId>org.opensearch.plugin</groupId><artifactId>lang-painless</artifactId>
    <version>${VERSION}</version></dependency></dependencies>
</project>
POM
  (cd "$work" && mvn -B -q -C -Dstyle.color=never dependency:copy-dependencies \
      -DoutputDirectory="$work/jars" -DincludeScope=runtime >&2) || { rm -rf "$work"; die "mvn could not fetch lang-painless $VERSION"; }
  local dst="$home/modules/lang-painless" jar
  mkdir -p "$dst"
  # the module's own jars only: OpenSearch, Lucene, Jackson … are in lib/ already
  for jar in "lang-painless-$VERSION" antlr4-runtime- asm-9 asm-analysis- asm-commons- asm-tree- asm-util- \
      "opensearch-scripting-painless-spi-$VERSION"; do
    compgen -G "$work/jars/${jar}*.jar" >/dev/null || { rm -rf "$work"; die "lang-painless: no ${jar}*.jar"; }
    cp "$work"/jars/${jar}*.jar "$dst/"
  done
  cat > "$dst/plugin-descriptor.properties" <<DESC
description=An easy, safe and fast scripting language for OpenSearch
version=$VERSION
name=lang-painless
classname=org.opensearch.painless.PainlessPlugin
java.version=11
opensearch.version=$VERSION
extended.plugins=
has.native.controller=false
DESC
  printf 'grant {\n  permission java.lang.RuntimePermission "createClassLoader";\n  permission java.lang.RuntimePermission "getClassLoader";\n};\n' \
    > "$dst/plugin-security.policy"
  rm -rf "$work"
}

maven_copy() {  # ARTIFACT FILE: fetch one artifact into the cache (once)
  local artifact="$1" file="$2"
  [[ -s "$CACHE/$file" ]] && return
  local dl="$CACHE/.download.$$"
  rm -rf "$dl"; mkdir -p "$dl"
  # -C: fail on checksum mismatch; -B/-q: no prompts, little output. dependency:copy resolves
  # through the local repository (~/.m2 or whatever settings.xml says) and copies the file out.
  if ! mvn -B -q -C -Dstyle.color=never dependency:copy \
      -Dartifact="$artifact" -DoutputDirectory="$dl" -Dmdep.overWriteReleases=true >&2; then
    rm -rf "$dl"
    die "mvn could not fetch $artifact (is Maven Central reachable? see the output above)"
  fi
  [[ -s "$dl/$file" ]] || { rm -rf "$dl"; die "mvn succeeded but $dl/$file is missing"; }
  mv -f "$dl/$file" "$CACHE/$file"
  rm -rf "$dl"
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

  maven_copy "$ARTIFACT" "opensearch-$VERSION.zip"
  maven_copy "$KNN_ARTIFACT" "opensearch-knn-$VERSION.0.zip"
  local zip="$CACHE/opensearch-$VERSION.zip"

  local tmp="$CACHE/.unpack.$$"
  rm -rf "$tmp"; mkdir -p "$tmp"
  unpack "$zip" "$tmp" || { rm -rf "$tmp"; die "could not unpack $zip (corrupt? delete it and retry)"; }
  [[ -x "$tmp/opensearch-$VERSION/bin/opensearch" ]] || { rm -rf "$tmp"; die "unexpected zip layout in $zip"; }
  painless_module "$tmp/opensearch-$VERSION"
  local java_home; java_home="$(dirname "$(dirname "$(readlink -f "$java")")")"
  JAVA_HOME="$java_home" "$tmp/opensearch-$VERSION/bin/opensearch-plugin" install --batch --silent \
      "file://$CACHE/opensearch-knn-$VERSION.0.zip" >&2 \
    || { rm -rf "$tmp"; die "could not install the k-NN plugin into $tmp/opensearch-$VERSION"; }
  # World-readable so the unprivileged user the tests run OpenSearch as (when we are root) can read it.
  chmod -R a+rX "$tmp/opensearch-$VERSION"
  touch "$tmp/opensearch-$VERSION/$(basename "$MARKER")"  # the marker `home` and `fetch` look for
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
