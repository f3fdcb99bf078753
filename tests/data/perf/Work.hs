-- The program behind the perf.data fixtures (see make_fixtures.sh): a CPU-bound phase in user
-- code and an allocating phase with much live data (so the GC runs), each a user span.
module Main (main) where

import Control.Exception (evaluate)
import Data.List (foldl')
import qualified Data.Map.Strict as M
import Debug.Trace (traceEventIO)
import System.Environment (getArgs)

collatz :: Int -> Int
collatz n0 = go n0 0
  where
    go 1 acc = acc
    go m acc = go (if even m then m `quot` 2 else 3 * m + 1) (acc + 1)

longest :: Int -> Int
longest limit = foldl' (\best k -> max best (collatz k)) 0 [1 .. limit]

buildMap :: Int -> M.Map Int [Int]
buildMap n = foldl' (\m k -> M.insert ((k * 7919) `mod` n) [k, k + 1] m) M.empty [1 .. n]

main :: IO ()
main = do
  args <- getArgs
  let scale = case args of
        (a : _) -> read a
        _ -> 1 :: Int
  traceEventIO "START collatz"
  r1 <- evaluate (longest (100000 * scale))
  traceEventIO "STOP collatz"
  print r1
  traceEventIO "START map"
  r2 <- evaluate (M.foldl' (\a xs -> a + sum xs) 0 (buildMap (100000 * scale)))
  traceEventIO "STOP map"
  print r2
