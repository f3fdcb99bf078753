#!/usr/bin/env bash
# Build the Debian trixie chroot that holds GHC 9.6.6 (the fixtures here and tests/ghc96.py use it).
# usage: make-chroot.sh [DIR]    (default: $HALVM_GHC96_CHROOT or /var/cache/halvm-prof/trixie)
# Needs root and mmdebstrap. Does nothing when DIR is already complete. The build goes to a
# temporary sibling renamed into place at the end, so an interrupted build never leaves a DIR that
# looks done; a lock keeps two builds on one machine from racing.
set -euo pipefail
dir=${1:-${HALVM_GHC96_CHROOT:-/var/cache/halvm-prof/trixie}}
[ -x "$dir/usr/bin/ghc" ] && exit 0
parent=$(dirname "$dir")
mkdir -p "$parent"
exec 9>"$dir.lock"
flock 9
# Another build may have finished while this one waited for the lock.
[ -x "$dir/usr/bin/ghc" ] && exit 0
# Under the lock, any temporary sibling is what a killed build left (a trap cannot run on SIGKILL).
rm -rf "$dir".tmp.*
tmp=$(mktemp -d "$dir.tmp.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mmdebstrap --quiet --mode=root --variant=apt \
  --include=ghc,ghc-prof,libghc-ghc-events-dev,gcc,libc6-dev trixie "$tmp"
[ -x "$tmp/usr/bin/ghc" ]
# A leftover incomplete DIR (no ghc in it) would make the rename nest the chroot inside it.
rm -rf "$dir"
mv "$tmp" "$dir"
trap - EXIT
