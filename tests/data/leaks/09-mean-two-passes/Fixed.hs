module Main (main) where

import Data.List (foldl')
import System.Environment (getArgs)

-- Response times in milliseconds, parsed from a load test's log.
responseTimes :: Int -> [Double]
responseTimes n = [ fromIntegral (20 + (i * 7919) `mod` 480) / 4 | i <- [1 .. n] ]

data Running = Running !Double !Int

-- Sum and count in the same pass, so the list is consumed as it is produced.
mean :: [Double] -> Double
mean xs = case foldl' step (Running 0 0) xs of
  Running total count -> total / fromIntegral count
  where
    step (Running total count) x = Running (total + x) (count + 1)

main :: IO ()
main = do
  args <- getArgs
  let n = case args of
        (a : _) -> read a
        [] -> 1000000
  putStrLn ("mean response time: " ++ show (mean (responseTimes n)) ++ " ms")
