#!/usr/bin/env bash
# Build the Debian sid chroot that holds GHC 9.10.3 (the fixtures here and tests/ghcchroot.py).
# usage: make-chroot.sh [DIR]    (default: $HALVM_GHC910_CHROOT or /var/cache/halvm-prof/sid)
set -euo pipefail
exec "$(dirname "$0")/../make-chroot.sh" sid "${1:-${HALVM_GHC910_CHROOT:-/var/cache/halvm-prof/sid}}"
