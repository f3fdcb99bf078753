#!/usr/bin/env bash
# Regenerate the GHC 9.10.3 fixtures in this folder. GHC 9.10.3 comes from Debian sid, in a chroot
# that make-chroot.sh builds when missing (needs root, mmdebstrap and util-linux's unshare).
# usage: make-fixtures.sh [OUTDIR]    (default: this folder)
# The chroot is $HALVM_GHC910_CHROOT, or /var/cache/halvm-prof/sid.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$(mkdir -p "${1:-$here}" && cd "${1:-$here}" && pwd)
# shellcheck source=../chroot-fixtures.sh
. "$here/../chroot-fixtures.sh"
chroot_fixtures "${HALVM_GHC910_CHROOT:-/var/cache/halvm-prof/sid}" "$here/make-chroot.sh"
# The same programs as the GHC 9.6.6 fixtures (../ghc96), so the two GHCs can be compared.
cp "$here"/../corpus/src/Leaky.hs "$here"/../corpus/src/ParFib.hs "$here"/../ghc96/Burn.hs \
  "$here"/../ghc96/Ticky.hs "$b"/
# Built from relative paths: no folder names end up in the profiles. Every RTS has the eventlog.
r ghc -O1 -prof -fprof-auto -rtsopts -outputdir o1 -o leaky-prof Leaky.hs >/dev/null
r ghc -O1 -prof -finfo-table-map -fdistinct-constructor-tables -rtsopts -outputdir o2 \
  -o leaky-ipe Leaky.hs >/dev/null
# -hi needs no profiling since GHC 9.4: the same map in an ordinary build.
r ghc -O1 -finfo-table-map -fdistinct-constructor-tables -rtsopts -outputdir o8 \
  -o leaky-ipe-np Leaky.hs >/dev/null
r ghc -O1 -rtsopts -outputdir o3 -o leaky-ev Leaky.hs >/dev/null
r ghc -O1 -threaded -rtsopts -outputdir o4 -o parfib ParFib.hs >/dev/null
r ghc -O1 -prof -fprof-auto -rtsopts -outputdir o5 -o burn Burn.hs >/dev/null
r ghc -O1 -ticky -ticky-allocd -rtsopts -outputdir o6 -o ticky Ticky.hs >/dev/null

# Cost-centre profiles: the reports, and heap profiles without and with the eventlog (-l writes
# the .hp too: both are kept, so a test can check one reading against the other).
r ./leaky-prof 100000 +RTS -p -RTS >/dev/null && mv "$b/leaky-prof.prof" "$out/leaky-p.prof"
r ./leaky-prof 100000 +RTS -pj -RTS >/dev/null && mv "$b/leaky-prof.prof" "$out/leaky-pj.prof"
for m in hc hm hd hy hr hb hT; do
  r ./leaky-prof 100000 +RTS -$m -i0.02 -RTS >/dev/null
  mv "$b/leaky-prof.hp" "$out/leaky-$m.hp"
done
# By era (GHC 9.10+): each census's closures by the era they were made in, one era a census.
r ./leaky-prof 100000 +RTS -he --automatic-era-increment -i0.02 -RTS >/dev/null
mv "$b/leaky-prof.hp" "$out/leaky-he.hp"
r ./leaky-prof 50000 +RTS -he --automatic-era-increment -l -i0.01 -RTS >/dev/null
mv "$b/leaky-prof.hp" "$out/leaky-he-l.hp" && mv "$b/leaky-prof.eventlog" "$out/leaky-he-l.eventlog"
# Half the size: with -l the scheduler events (every stack-chunk overflow of lazySum) dominate.
for m in hc hT; do
  r ./leaky-prof 50000 +RTS -$m -l -i0.01 -RTS >/dev/null
  mv "$b/leaky-prof.hp" "$out/leaky-$m-l.hp" && mv "$b/leaky-prof.eventlog" "$out/leaky-$m-l.eventlog"
done
# Time-profile samples (EVENT_PROF_SAMPLE_COST_CENTRE): -p and any -l.
r ./leaky-prof 50000 +RTS -p -l -RTS >/dev/null
mv "$b/leaky-prof.prof" "$out/leaky-p-l.prof" && mv "$b/leaky-prof.eventlog" "$out/leaky-p-l.eventlog"
# Burn.hs spends its time in three named functions; -l-au drops every class and keeps the samples.
r ./burn 200000 +RTS -p -l-au -RTS >/dev/null
mv "$b/burn.prof" "$out/burn-p-l-au.prof" && mv "$b/burn.eventlog" "$out/burn-p-l-au.eventlog"

# Info-table profiles: the IPE events in the eventlog, the info table addresses in the .hp; from
# a profiled build and from an ordinary one.
r ./leaky-ipe 100000 +RTS -hi -i0.02 -RTS >/dev/null && mv "$b/leaky-ipe.hp" "$out/leaky-hi.hp"
r ./leaky-ipe 50000 +RTS -hi -l -i0.01 -RTS >/dev/null
mv "$b/leaky-ipe.hp" "$out/leaky-hi-l.hp" && mv "$b/leaky-ipe.eventlog" "$out/leaky-hi-l.eventlog"
r ./leaky-ipe-np 50000 +RTS -hi -l -i0.01 -RTS >/dev/null
mv "$b/leaky-ipe-np.hp" "$out/leaky-hi-np-l.hp"
mv "$b/leaky-ipe-np.eventlog" "$out/leaky-hi-np-l.eventlog"

# Threaded: scheduler, GC, sampled spark counters, user events and markers; -lf every spark event.
r ./parfib 28 +RTS -N2 -l -RTS >/dev/null && mv "$b/parfib.eventlog" "$out/parfib-N2-l.eventlog"
r ./parfib 20 +RTS -N2 -l -lf -RTS >/dev/null && mv "$b/parfib.eventlog" "$out/parfib-N2-l-lf.eventlog"

# A non-threaded log of many small collections (a 64 KB allocation area).
r ./leaky-ev 4000 +RTS -l -A64k -RTS >/dev/null && mv "$b/leaky-ev.eventlog" "$out/leaky-gc-l.eventlog"

# Ticky-ticky counters: in the eventlog (-lT) and the text report (-r), in two runs.
r ./ticky 200000 +RTS -l -lT -i0.005 -RTS >/dev/null && mv "$b/ticky.eventlog" "$out/ticky-lT.eventlog"
r ./ticky 200000 +RTS -rticky.r.txt -RTS >/dev/null && mv "$b/ticky.r.txt" "$out/ticky.r.txt"

# ghc-events 0.20.0.0's reading of every eventlog here: sid packages its executable.
write_references "$out" ghc-events show
