-- A lazy accumulating parameter: total adds each reading to acc without forcing it, so the walk
-- builds a chain of (acc + x) thunks, each holding a reading not yet worked out, and only the
-- final print forces the chain, deep on the stack. A bang on acc keeps one evaluated Int.
module Main (main) where

import System.Environment (getArgs)

reading :: Int -> Int
reading n = go (8 :: Int) n
  where
    go 0 acc = acc
    go k acc = let acc' = (acc * 31 + k) `mod` 1000003 in acc' `seq` go (k - 1) acc'

total :: Int -> [Int] -> Int
total acc [] = acc
total acc (x : xs) = total (acc + x) xs

main :: IO ()
main = do
  args <- getArgs
  let n = case args of (a : _) -> read a; _ -> 90000
  print (total 0 (map reading [1 .. n]))
