-- A lazy pair in foldl: the mean's running (sum, count) is folded with the lazy foldl, so the
-- whole fold is a chain of suspended steps, each holding its reading, forced only when the
-- mean is printed. foldl' with the pair's fields forced (bang patterns) runs in constant space.
module Main (main) where

import System.Environment (getArgs)

reading :: Int -> Int
reading n = go (8 :: Int) n
  where
    go 0 acc = acc
    go k acc = let acc' = (acc * 31 + k) `mod` 1000003 in acc' `seq` go (k - 1) acc'

step :: (Int, Int) -> Int -> (Int, Int)
step (s, c) x = (s + x, c + 1)

mean :: [Int] -> Int
mean xs = let (s, c) = foldl step (0, 0) xs in s `div` max 1 c

main :: IO ()
main = do
  args <- getArgs
  let n = case args of (a : _) -> read a; _ -> 50000
  print (mean (map reading [1 .. n]))
