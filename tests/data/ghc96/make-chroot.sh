#!/usr/bin/env bash
# Build the Debian trixie chroot that holds GHC 9.6.6 (the fixtures here and tests/ghcchroot.py).
# usage: make-chroot.sh [DIR]    (default: $HALVM_GHC96_CHROOT or /var/cache/halvm-prof/trixie)
set -euo pipefail
exec "$(dirname "$0")/../make-chroot.sh" trixie "${1:-${HALVM_GHC96_CHROOT:-/var/cache/halvm-prof/trixie}}"
