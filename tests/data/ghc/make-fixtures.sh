#!/usr/bin/env bash
# Regenerate the GHC fixtures here from ../corpus/src/Leaky.hs (needs: apt-get install ghc ghc-prof).
# -P adds exact ticks/bytes columns; -pa the detailed report; a killed run leaves a cut .hp.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
b=$(mktemp -d)
cp "$here/../corpus/src/Leaky.hs" "$here/Ops.hs" "$here/Names.hs" "$here/CabalParse.hs" \
  "$here/sample.cabal" "$b/"
cd "$b"
ghc -O1 -prof -fprof-auto -rtsopts -outputdir o -o leaky Leaky.hs >/dev/null
ghc -O1 -prof -fprof-auto -rtsopts -outputdir o2 -o ops Ops.hs >/dev/null
ghc -O1 -prof -fprof-auto -rtsopts -outputdir o3 -o names Names.hs >/dev/null
# A second program: an operator (<+>) and a primed SCC name (tot'al) in the reports.
./ops 200000 +RTS -p -hc -i0.005 -RTS >/dev/null && mv ops.prof "$here/ops-hc.prof" && mv ops.hp "$here/ops-hc.hp"
./leaky 20000 +RTS -P -RTS >/dev/null && mv leaky.prof "$here/leaky-P.prof"
./leaky 20000 +RTS -pa -RTS >/dev/null && mv leaky.prof "$here/leaky-pa.prof"
# Killed while running; its first 6000 bytes keep the fixture small and end mid-sample.
./leaky 3000000 +RTS -hy -i0.001 -RTS >/dev/null & pid=$!
sleep 0.4; kill -9 "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true
head -c 6000 leaky.hp > "$here/leaky-killed.hp"
# Names.hs: a quote, a backslash and UTF-8 in cost-centre names (-pj writes invalid JSON), and an
# argument with quotes and spaces (the .hp JOB line doubles the quotes).
./names 300000 'say "hi" there' +RTS -hc -p -i0.005 -RTS >/dev/null
mv names.hp "$here/names-hc.hp" && mv names.prof "$here/names-hc.prof"
./names 300000 +RTS -pj -RTS >/dev/null && mv names.prof "$here/names-pj.prof"
./names 300000 +RTS -P -RTS >/dev/null && mv names.prof "$here/names-P.prof"
# A killed -hb run: GHC writes biographical censuses only at exit, so only the first is there.
./leaky 3000000 +RTS -hb -i0.01 -RTS >/dev/null & pid=$!
sleep 0.3; kill -9 "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true
mv leaky.hp "$here/leaky-hb-killed.hp"
# A real library at work, threaded on two capabilities: Cabal's .cabal parser (-P: exact counts,
# "2 processors" in the header; -hy: heap by type, library types in the band names).
ghc -O1 -prof -fprof-auto -rtsopts -threaded -package Cabal -outputdir o4 -o cabal-parse \
  CabalParse.hs >/dev/null
./cabal-parse 300 sample.cabal +RTS -N2 -P -hy -i0.02 -RTS >/dev/null
mv cabal-parse.prof "$here/cabal-parse-N2-P.prof" && mv cabal-parse.hp "$here/cabal-parse-N2-hy.hp"
# Ticky-ticky (no -prof): the counter table +RTS -r writes at exit.
ghc -O1 -ticky -rtsopts -outputdir o5 -o ops-ticky Ops.hs >/dev/null
./ops-ticky 200000 +RTS -rops.ticky -RTS >/dev/null && mv ops.ticky "$here/ops-ticky.ticky"
rm -rf "$b"
echo "wrote fixtures in $here"
