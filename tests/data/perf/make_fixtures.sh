#!/usr/bin/env bash
# Makes the perf.data fixtures from Work.hs (GHC 9.0.2, Debian's linux-perf, run as root or with
# kernel.perf_event_paranoid <= 1). Run from anywhere: bash tests/data/perf/make_fixtures.sh
set -euo pipefail
cd "$(dirname "$0")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp Work.hs "$tmp/"
(cd "$tmp" && ghc -O -g -threaded -rtsopts -eventlog Work.hs -o work >/dev/null)
cp "$tmp/work" work
# The main fixture: perf's clock is CLOCK_MONOTONIC (-k mono), with callchains (-g), and the
# eventlog beside it, so the two can be aligned through the wall clock.
perf record -q -k mono -e cpu-clock -F 1000 -g -o work.perf.data \
  ./work 1 +RTS -l -N1 -olwork.eventlog -RTS >/dev/null
# Without -k mono: perf's own clock, which only the first-sample guess can align.
perf record -q -e cpu-clock -F 1000 -o work-nomono.perf.data \
  ./work 1 +RTS -l -N1 -olwork-nomono.eventlog -RTS >/dev/null
# Two capabilities: the parallel GC's worker runs on cap 1, in its own kernel thread.
perf record -q -k mono -e cpu-clock -F 1000 -o work-n2.perf.data \
  ./work 1 +RTS -l -N2 -olwork-n2.eventlog -RTS >/dev/null
# Cut short inside the data section, as a copy that stopped or a full disk leaves it.
size=$(stat -c %s work.perf.data)
head -c $((size * 3 / 5 + 3)) work.perf.data > work-cut.perf.data
# The program's MMAP written after samples of it (perf writes each CPU's buffer in turn, so
# records are in time order per CPU only): a reader must not take those samples for another
# process's. This happens on some runs only; record until it does (with the binary above).
for _ in $(seq 1 100); do
  perf record -q -k mono -e cpu-clock -F 2000 -o work-late.perf.data \
    ./work 1 +RTS -l -N1 -olwork-late.eventlog -RTS >/dev/null
  if perf report -D -i work-late.perf.data 2>/dev/null | python3 late_mmap.py; then break; fi
  rm work-late.perf.data
done
chmod 644 ./*.perf.data ./*.eventlog
ls -l work ./*.perf.data ./*.eventlog
