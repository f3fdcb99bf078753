#!/usr/bin/env bash
# Regenerate the GHC 9.0 fixtures in this folder: each leaky program built as the issue builds
# it (ghc -prof -fprof-auto -rtsopts) and hunted for real; every run's .hp is kept in
# ghc90-NAME/ (01-hc.hp, then each suspect's -hr/-hd/-hy/-hb runs), for the tests that read a
# hunt's files without GHC (tests/unit/test_hunt_analysis.py). The tests that hunt build and run
# the programs themselves (tests/cli/test_hunt.py).
# usage: make-fixtures.sh [OUTDIR]    (default: this folder; needs ghc, ghc-prof, halvm-prof)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$(mkdir -p "${1:-$here}" && cd "${1:-$here}" && pwd)
b=$(mktemp -d)
trap 'rm -rf "$b"' EXIT
cd "$b"
for p in Cache Lazy TwoPass Accum Steady LazyParam HeldRef; do
  exe=$(echo "$p" | tr 'A-Z' 'a-z')
  cp "$here/$p.hs" .
  # Built from relative paths: no folder names end up in the profiles.
  ghc -prof -fprof-auto -rtsopts -outputdir "o-$p" -o "$exe" "$p.hs" >/dev/null
  rm -rf "$out/ghc90-$exe"
  halvm-prof hunt --suspects 2 -o "$out/ghc90-$exe" -- "./$exe" >/dev/null 2>&1
done
