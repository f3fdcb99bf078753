#!/usr/bin/env bash
# Regenerate the GHC 9.6.6 fixtures in this folder. GHC 9.6.6 comes from Debian trixie, in a chroot
# that make-chroot.sh builds when missing (needs root, mmdebstrap and util-linux's unshare).
# usage: make-fixtures.sh [OUTDIR]    (default: this folder)
# The chroot is $HALVM_GHC96_CHROOT, or /var/cache/halvm-prof/trixie.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$(mkdir -p "${1:-$here}" && cd "${1:-$here}" && pwd)
# shellcheck source=../chroot-fixtures.sh
. "$here/../chroot-fixtures.sh"
chroot_fixtures "${HALVM_GHC96_CHROOT:-/var/cache/halvm-prof/trixie}" "$here/make-chroot.sh"
cp "$here"/../corpus/src/Leaky.hs "$here"/../corpus/src/ParFib.hs "$here"/Burn.hs "$here"/Ticky.hs "$here"/ShowEventlog.hs "$b"/
# Built from relative paths: no folder names end up in the profiles. GHC 9.6 has the eventlog in
# every runtime system, so no -eventlog (deprecated, it only warns).
r ghc -O1 -prof -fprof-auto -rtsopts -outputdir o1 -o leaky-prof Leaky.hs >/dev/null
r ghc -O1 -prof -finfo-table-map -fdistinct-constructor-tables -rtsopts -outputdir o2 \
  -o leaky-ipe Leaky.hs >/dev/null
r ghc -O1 -rtsopts -outputdir o3 -o leaky-ev Leaky.hs >/dev/null
r ghc -O1 -threaded -rtsopts -outputdir o4 -o parfib ParFib.hs >/dev/null
r ghc -O1 -prof -fprof-auto -rtsopts -outputdir o5 -o burn Burn.hs >/dev/null
r ghc -O1 -ticky -ticky-allocd -rtsopts -outputdir o6 -o ticky Ticky.hs >/dev/null
r ghc -O1 -package ghc-events -outputdir o7 -o show-eventlog ShowEventlog.hs >/dev/null

# Cost-centre profiles: the reports, and heap profiles without and with the eventlog (-l writes
# the .hp too: both are kept, so a test can check one reading against the other).
r ./leaky-prof 100000 +RTS -p -RTS >/dev/null && mv "$b/leaky-prof.prof" "$out/leaky-p.prof"
r ./leaky-prof 100000 +RTS -pj -RTS >/dev/null && mv "$b/leaky-prof.prof" "$out/leaky-pj.prof"
for m in hc hy hd hT; do
  r ./leaky-prof 100000 +RTS -$m -i0.02 -RTS >/dev/null
  mv "$b/leaky-prof.hp" "$out/leaky-$m.hp"
done
# Half the size: with -l the scheduler events (every stack-chunk overflow of lazySum) dominate.
for m in hc hT; do
  r ./leaky-prof 50000 +RTS -$m -l -i0.01 -RTS >/dev/null
  mv "$b/leaky-prof.hp" "$out/leaky-$m-l.hp" && mv "$b/leaky-prof.eventlog" "$out/leaky-$m-l.eventlog"
done
# Time-profile samples (EVENT_PROF_SAMPLE_COST_CENTRE): -p and any -l. The RTS posts one per tick
# per capability whenever the eventlog is on; the -l classes do not gate them.
r ./leaky-prof 50000 +RTS -p -l -RTS >/dev/null
mv "$b/leaky-prof.prof" "$out/leaky-p-l.prof" && mv "$b/leaky-prof.eventlog" "$out/leaky-p-l.eventlog"
# Burn.hs spends its time in three named functions; -l-au drops every class (scheduler, GC...)
# and leaves the samples, which shows they need no class and keeps the log small.
r ./burn 200000 +RTS -p -l-au -RTS >/dev/null
mv "$b/burn.prof" "$out/burn-p-l-au.prof" && mv "$b/burn.eventlog" "$out/burn-p-l-au.eventlog"

# Info-table profiles: the IPE events in the eventlog, the info table addresses in the .hp.
r ./leaky-ipe 100000 +RTS -hi -i0.02 -RTS >/dev/null && mv "$b/leaky-ipe.hp" "$out/leaky-hi.hp"
r ./leaky-ipe 50000 +RTS -hi -l -i0.01 -RTS >/dev/null
mv "$b/leaky-ipe.hp" "$out/leaky-hi-l.hp" && mv "$b/leaky-ipe.eventlog" "$out/leaky-hi-l.eventlog"

# Threaded: scheduler, GC, sampled spark counters, user events and markers; -lf every spark event.
for n in 2 4; do
  r ./parfib 28 +RTS -N$n -l -RTS >/dev/null && mv "$b/parfib.eventlog" "$out/parfib-N$n-l.eventlog"
done
r ./parfib 20 +RTS -N2 -l -lf -RTS >/dev/null && mv "$b/parfib.eventlog" "$out/parfib-N2-l-lf.eventlog"

# A non-threaded log of many small collections (a 64 KB allocation area).
r ./leaky-ev 4000 +RTS -l -A64k -RTS >/dev/null && mv "$b/leaky-ev.eventlog" "$out/leaky-gc-l.eventlog"

# Ticky-ticky counters: in the eventlog (-lT: definitions, then all counters at each -i tick) and
# the text report (-r). GHC 9.6 refuses both in one run ("cannot be used in conjunction").
r ./ticky 200000 +RTS -l -lT -i0.005 -RTS >/dev/null && mv "$b/ticky.eventlog" "$out/ticky-lT.eventlog"
r ./ticky 200000 +RTS -rticky.r.txt -RTS >/dev/null && mv "$b/ticky.r.txt" "$out/ticky.r.txt"

# ghc-events 0.19.0.1's reading of every eventlog here (trixie has its library, no executable).
write_references "$out" ./show-eventlog
