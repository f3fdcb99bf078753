-- A leak only when profiled: the mean's (sum, count) pair under foldl'. Built with -O, GHC's
-- strictness analysis sees both fields are needed and keeps them evaluated; -fprof-auto's cost
-- centres stop that analysis, so the profiled build piles up (+) thunks in the fields.
-- Forcing the fields in step (bang patterns) makes it strict in every build.
module Main (main) where

import Data.List (foldl')
import System.Environment (getArgs)

reading :: Int -> Int
reading n = go (60 :: Int) n
  where
    go 0 acc = acc
    go k acc = let acc' = (acc * 31 + k) `mod` 1000003 in acc' `seq` go (k - 1) acc'

step :: (Int, Int) -> Int -> (Int, Int)
step (s, c) x = (s + x, c + 1)

main :: IO ()
main = do
  args <- getArgs
  let n = case args of (a : _) -> read a; _ -> 80000
      (s, c) = foldl' step (0, 0) (map reading [1 .. n])
  print (s `div` max 1 c)
