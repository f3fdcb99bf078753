"""GHC 9.6.6 in the Debian trixie chroot: :data:`tests.ghcchroot.GHC96`'s methods under the
names the older tests use (``tests/ghcchroot.py`` says how the chroots are run)."""

from __future__ import annotations

from tests.ghcchroot import GHC96

DEFAULT_ROOT = GHC96.default
DATA = GHC96.data

chroot_root = GHC96.root
inside = GHC96.inside
work_dir = GHC96.work_dir
command = GHC96.command
run_in_chroot = GHC96.run
popen_in_chroot = GHC96.popen
build = GHC96.build
