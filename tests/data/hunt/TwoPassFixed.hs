-- TwoPass fixed: one walk sums the readings and counts the large ones together.
{-# LANGUAGE BangPatterns #-}
module Main (main) where

import Data.List (foldl')
import System.Environment (getArgs)

reading :: Int -> Int
reading n = go (8 :: Int) n
  where
    go 0 acc = acc
    go k acc = let acc' = (acc * 31 + k) `mod` 1000003 in acc' `seq` go (k - 1) acc'

large :: Int -> Bool
large r = foldr (\x acc -> acc || (r + x) `mod` 999983 == 0) False [1 .. 10 :: Int]

main :: IO ()
main = do
  args <- getArgs
  let n = case args of (a:_) -> read a; _ -> 100000
      step (!s, !c) r = (s + r, if large r then c + 1 else c :: Int)
      (total, count) = foldl' step (0, 0) (map reading [1 .. n])
  print total
  print count
