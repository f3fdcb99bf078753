-- Accum fixed: a bounded summary (the count and the last step's value), not every step.
{-# LANGUAGE BangPatterns #-}
module Main (main) where

import Data.List (foldl')
import System.Environment (getArgs)

work :: Int -> Int
work n = go (8 :: Int) n
  where
    go 0 acc = acc
    go k acc = let acc' = (acc * 31 + k) `mod` 1000003 in acc' `seq` go (k - 1) acc'

record :: (Int, Int) -> Int -> (Int, Int)
record (!count, _) i = let w = work i in w `seq` (count + 1, w)

main :: IO ()
main = do
  args <- getArgs
  let n = case args of (a:_) -> read a; _ -> 100000
      (count, lastOne) = foldl' record (0, 0) [1 .. n]
  print (count, lastOne)
