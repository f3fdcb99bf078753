-- A Data.Map workload for `perf annotate` (tests/annotate_recordings.py): inserts,
-- lookups and a fold, so the hot code is containers' (library code) as well as ours.
module Main (main) where

import Data.List (foldl')
import qualified Data.Map.Strict as M
import System.Environment (getArgs)

build :: Int -> M.Map Int Int
build n = foldl' (\m k -> M.insertWith (+) ((k * 7919) `rem` (n `quot` 2)) k m) M.empty [1 .. n]

probe :: M.Map Int Int -> Int -> Int
probe m n = foldl' (\acc k -> maybe acc (+ acc) (M.lookup ((k * 31) `rem` n) m)) 0 [1 .. n]

main :: IO ()
main = do
  args <- getArgs
  let scale = case args of
        (a : _) -> read a
        _ -> 1 :: Int
      n = 200000 * scale
      m = build n
  print (M.size m, probe m (4 * n), M.foldl' (+) 0 m)
