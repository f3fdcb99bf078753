{-# LANGUAGE BangPatterns #-}
module Main (main) where

import System.Environment (getArgs)

-- A noisy signal, one sample per tick.
signal :: Int -> [Double]
signal n = [ fromIntegral ((i * 7919) `mod` 1000) / 10 | i <- [0 .. n] ]

-- Exponentially smoothed signal: each value mixes a sample with the smoothed value before it.
-- Each value is forced before the next is made, so no value waits on a chain of earlier ones.
smooth :: [Double] -> [Double]
smooth [] = []
smooth (first : samples) = go first samples
  where
    go !previous rest = previous : case rest of
      [] -> []
      (sample : more) -> go (mix previous sample) more
    mix previous sample = 0.95 * previous + 0.05 * sample

main :: IO ()
main = do
  args <- getArgs
  let n = case args of
        (a : _) -> read a
        [] -> 700000
  putStrLn ("smoothed value at tick " ++ show n ++ ": " ++ show (last (smooth (signal n))))
