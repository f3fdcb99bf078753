#!/usr/bin/env bash
# Build a Debian chroot that holds a GHC newer than the host's (bookworm's 9.0.2): trixie has GHC
# 9.6.6 (tests/data/ghc96), sid GHC 9.10.3 (tests/data/ghc910); tests/ghcchroot.py runs them.
# usage: make-chroot.sh SUITE DIR
# Needs root and mmdebstrap. Does nothing when DIR is already complete. The build goes to a
# temporary sibling renamed into place at the end, so an interrupted build never leaves a DIR that
# looks done; a lock keeps two builds on one machine from racing.
set -euo pipefail
suite=$1
dir=$2
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
options=()
# The package source's index for sid is signed with a Valid-Until date that has passed.
[ "$suite" = sid ] && options+=(--aptopt='Acquire::Check-Valid-Until "false"')
mmdebstrap --quiet --mode=root --variant=apt "${options[@]}" \
  --include=ghc,ghc-prof,libghc-ghc-events-dev,gcc,libc6-dev "$suite" "$tmp"
[ -x "$tmp/usr/bin/ghc" ]
# A leftover incomplete DIR (no ghc in it) would make the rename nest the chroot inside it.
rm -rf "$dir"
mv "$tmp" "$dir"
trap - EXIT
