#!/usr/bin/env bash
# The path of a CPython at least MAJOR.MINOR (argument, e.g. 3.12) on this machine, or nothing and
# exit 1: python3.N on PATH that runs (pyenv's shims name versions they will not run), then the
# interpreters pyenv keeps (PYENV_ROOT, else ~/.pyenv), then /usr/local/bin and /usr/bin: the
# oldest that qualifies, nearest the one a peer's pins were made with (basic-memory: 3.12).
set -u
want="${1:?usage: python_at_least.sh MAJOR.MINOR}"
check="import sys; sys.exit(0 if sys.version_info >= tuple(map(int, '$want'.split('.'))) else 1)"
candidates=()
for minor in 12 13 14 15; do
  candidates+=("$(command -v "python3.$minor" 2>/dev/null)")
done
roots=("${PYENV_ROOT:-$HOME/.pyenv}")
if command -v pyenv > /dev/null 2>&1; then
  roots+=("$(pyenv root)")
fi
for root in "${roots[@]}"; do
  [ -d "$root/versions" ] || continue
  while IFS= read -r version; do
    candidates+=("$root/versions/$version/bin/python3")
  done < <(ls "$root/versions" | grep -E '^3\.[0-9]+\.[0-9]+$' | sort -t. -k1,1n -k2,2n -k3,3n)
done
candidates+=(/usr/local/bin/python3 /usr/bin/python3)
for python in "${candidates[@]}"; do
  [ -n "$python" ] && [ -x "$python" ] || continue
  if "$python" -c "$check" 2>/dev/null; then
    echo "$python"
    exit 0
  fi
done
exit 1
