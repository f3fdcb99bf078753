# Sourced by ghc96/make-fixtures.sh and ghc910/make-fixtures.sh: what making fixtures in a GHC
# chroot takes, whichever the GHC.
#
# chroot_fixtures ROOT MAKE_CHROOT: builds the chroot at ROOT with MAKE_CHROOT when missing and
# makes the build folder $b inside it (removed at exit; $wd is the same folder seen from inside).
# The build folder lives inside the chroot, where the programs run (they link its glibc).
chroot_fixtures() {
  root=$1
  "$2" "$root"
  b=$(mktemp -d "$root/tmp/halvm-fixtures.XXXXXX")
  trap 'rm -rf "$b"' EXIT
  wd=/tmp/$(basename "$b")
}

# r COMMAND...: runs COMMAND in the chroot's build folder. Each command gets its own mount
# namespace with /proc (GHC needs it) mounted inside the chroot: the mount ends with the process,
# so there is nothing to unmount, even after a kill. No --fork: without a new PID namespace unshare
# execs the command itself.
r() { unshare --mount-proc --root="$root" --wd="$wd" "$@"; }

# write_references OUT SHOW...: SHOW's reading of every eventlog in OUT, as NAME.reference.
write_references() {
  local out=$1 f
  shift
  for f in "$out"/*.eventlog; do
    cp "$f" "$b/in.eventlog"
    r "$@" in.eventlog > "$f.reference"
  done
  echo "wrote $out"
}
