-- An accumulator that only grows: a log of every step, kept by a strict left fold. Each step
-- puts one evaluated line in front of the log and nothing ever drops a line; the log is the
-- fold's argument, held by the code still running, until the end.
module Main (main) where

import Data.List (foldl')
import System.Environment (getArgs)

work :: Int -> Int
work n = go (8 :: Int) n
  where
    go 0 acc = acc
    go k acc = let acc' = (acc * 31 + k) `mod` 1000003 in acc' `seq` go (k - 1) acc'

record :: [Int] -> Int -> [Int]
record logged i = let w = work i in w `seq` (w : logged)

main :: IO ()
main = do
  args <- getArgs
  let n = case args of (a:_) -> read a; _ -> 100000
      logged = foldl' record [] [1 .. n]
  print (length logged)
