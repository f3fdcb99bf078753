module Main (main) where

import Data.List (foldl')
import System.Environment (getArgs)

-- Request latencies in microseconds, as a load test records them.
latencies :: Int -> [Int]
latencies n = [ 200 + (i * 7919 + i * i) `mod` 50000 | i <- [1 .. n] ]

-- Fastest, slowest and count, in one strict pass.
summary :: [Int] -> (Int, Int, Int)
summary = foldl' step (maxBound, minBound, 0)
  where
    step (fastest, slowest, count) t = (min fastest t, max slowest t, count + 1)

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
