module Main (main) where

import System.Environment (getArgs)

-- A noisy signal, one sample per tick.
signal :: [Double]
signal = [ fromIntegral ((i * 7919) `mod` 1000) / 10 | i <- [1 :: Int ..] ]

-- Exponentially smoothed signal, defined by itself: each value is a mix of the sample and
-- the previous smoothed value.
smoothed :: [Double]
smoothed = head signal : zipWith mix smoothed (tail signal)
  where
    mix previous sample = 0.95 * previous + 0.05 * sample

main :: IO ()
main = do
  args <- getArgs
  let n = case args of
        (a : _) -> read a
        [] -> 500000
  putStrLn ("smoothed value at tick " ++ show n ++ ": " ++ show (smoothed !! n))
