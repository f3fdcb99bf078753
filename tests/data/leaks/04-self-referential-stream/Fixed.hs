{-# LANGUAGE BangPatterns #-}
module Main (main) where

import System.Environment (getArgs)

-- A noisy signal, one sample per tick.
signal :: [Double]
signal = [ fromIntegral ((i * 7919) `mod` 1000) / 10 | i <- [1 :: Int ..] ]

-- The smoothed value after n more samples, each step forced before the next: no stream whose
-- elements wait on each other.
smoothedAt :: Int -> Double
smoothedAt n = go n (head signal) (tail signal)
  where
    go 0 !current _ = current
    go k !current (sample : rest) = go (k - 1) (mix current sample) rest
    go _ !current [] = current
    mix previous sample = 0.95 * previous + 0.05 * sample

main :: IO ()
main = do
  args <- getArgs
  let n = case args of
        (a : _) -> read a
        [] -> 500000
  putStrLn ("smoothed value at tick " ++ show n ++ ": " ++ show (smoothedAt n))
