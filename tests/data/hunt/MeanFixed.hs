-- Mean fixed: one strict fold sums and counts together.
{-# LANGUAGE BangPatterns #-}
module Main (main) where

import Data.List (foldl')
import System.Environment (getArgs)

reading :: Int -> Int
reading n = go (8 :: Int) n
  where
    go 0 acc = acc
    go k acc = let acc' = (acc * 31 + k) `mod` 1000003 in acc' `seq` go (k - 1) acc'

mean :: [Int] -> Int
mean xs = let (s, c) = foldl' step (0, 0) xs in s `div` max 1 c
  where
    step (!s', !c') x = (s' + x, c' + 1 :: Int)

main :: IO ()
main = do
  args <- getArgs
  let n = case args of (a : _) -> read a; _ -> 100000
  print (mean (map reading [1 .. n]))
