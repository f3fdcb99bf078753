#!/usr/bin/env bash
# Regenerate the GHC eventlog fixtures in this folder (needs: apt-get install ghc).
# usage: make-fixtures.sh [OUTDIR]    (default: this folder)
# With GHC_EVENTS_021=/path/to/ghc-events (version 0.21), also writes NAME.eventlog.reference
# files with `ghc-events show`, for the fixtures and for ../../corpus/*.eventlog.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$(mkdir -p "${1:-$here}" && cd "${1:-$here}" && pwd)
b=$(mktemp -d)
trap 'rm -rf "$b"' EXIT
cp "$here"/../../corpus/src/ParFib.hs "$here"/../../corpus/src/Leaky.hs "$here"/Spin.hs "$here"/Timeline.hs "$b"/
cd "$b"
ghc -O1 -threaded -eventlog -rtsopts -outputdir o1 -o parfib ParFib.hs >/dev/null
ghc -O1 -threaded -eventlog -rtsopts -outputdir o2 -o spin Spin.hs >/dev/null
ghc -O1 -threaded -eventlog -rtsopts -outputdir o3 -o timeline Timeline.hs >/dev/null
ghc -O1 -prof -fprof-auto -eventlog -rtsopts -outputdir o4 -o leaky Leaky.hs >/dev/null
# A heap profile by cost-centre stack written twice by one run: into the eventlog and the .hp.
./leaky 50000 +RTS -hc -l -i0.02 -RTS >/dev/null
mv leaky.eventlog "$out/leaky-hc-l.eventlog"; mv leaky.hp "$out/leaky-hc-l.hp"
# Full spark events (-lf) on two capabilities.
./parfib 20 +RTS -N2 -l -lf -RTS >/dev/null
mv parfib.eventlog "$out/parfib-N2-lf.eventlog"
# The runtime timeline's logs: parallel collections (a small -A makes many), threads blocking on
# MVars and channels, nested START/STOP spans, markers; -lf adds every spark event.
for n in 2 4; do
  ./timeline 22 +RTS -N$n -l -A64k -RTS >/dev/null
  mv timeline.eventlog "$out/timeline-N$n.eventlog"
done
./timeline 20 +RTS -N2 -l -lf -A64k -RTS >/dev/null
mv timeline.eventlog "$out/timeline-N2-lf.eventlog"
# Killed at once: GHC has written the header, no event buffer yet.
./spin +RTS -N2 -l -RTS & pid=$!
sleep 0.02; kill -9 "$pid"; wait "$pid" 2>/dev/null || true
mv spin.eventlog "$out/spin-killed-early.eventlog"
if [ -n "${GHC_EVENTS_021:-}" ]; then
  for f in "$out"/parfib-N2-lf.eventlog "$out"/spin-killed-early.eventlog "$out"/timeline-*.eventlog; do
    "$GHC_EVENTS_021" show "$f" > "$f.reference" || true
  done
  for f in "$here"/../../corpus/*.eventlog; do
    "$GHC_EVENTS_021" show "$f" > "$out/$(basename "$f").reference"
  done
fi
echo "wrote $out"
