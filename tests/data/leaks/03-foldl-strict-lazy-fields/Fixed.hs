module Main (main) where

import Data.List (foldl')
import System.Environment (getArgs)

-- Request latencies in microseconds, as a load test records them.
latencies :: Int -> [Int]
latencies n = [ 200 + (i * 7919 + i * i) `mod` 50000 | i <- [1 .. n] ]

-- foldl' only forces the accumulator to its outer constructor, so the fields need their own
-- strictness: a record with strict fields is evaluated whole at every step.
data Summary = Summary !Int !Int !Int

-- Fastest, slowest and count, in one strict pass.
summary :: [Int] -> (Int, Int, Int)
summary xs = case foldl' step (Summary maxBound minBound 0) xs of
  Summary fastest slowest count -> (fastest, slowest, count)
  where
    step (Summary fastest slowest count) t = Summary (min fastest t) (max slowest t) (count + 1)

main :: IO ()
main = do
  args <- getArgs
  let n = case args of
        (a : _) -> read a
        [] -> 500000
      (fastest, slowest, count) = summary (latencies n)
  putStrLn ("requests: " ++ show count)
  putStrLn ("fastest: " ++ show fastest ++ " us")
  putStrLn ("slowest: " ++ show slowest ++ " us")
