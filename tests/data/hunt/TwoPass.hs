-- Data kept for a second pass: the list of readings is walked twice, once to sum it and once to
-- count its large values. The first walk builds it; the second still needs it, so every
-- evaluated cell stays until the second walk, which lets go of it as it goes.
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
      readings = map reading [1 .. n]
  print (foldl' (+) 0 readings)
  print (length (filter large readings))
