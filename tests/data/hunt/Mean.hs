-- Two passes over one list: the textbook mean, sum xs / length xs. The sum walks the list and
-- makes every cell; length walks it again, so the whole list is kept between the two walks.
-- One fold that sums and counts together keeps nothing.
module Main (main) where

import Data.List (foldl')
import System.Environment (getArgs)

reading :: Int -> Int
reading n = go (8 :: Int) n
  where
    go 0 acc = acc
    go k acc = let acc' = (acc * 31 + k) `mod` 1000003 in acc' `seq` go (k - 1) acc'

mean :: [Int] -> Int
mean xs = foldl' (+) 0 xs `div` max 1 (length xs)

main :: IO ()
main = do
  args <- getArgs
  let n = case args of (a : _) -> read a; _ -> 100000
  print (mean (map reading [1 .. n]))
