{-# LANGUAGE BangPatterns #-}
module Main (main) where

import Data.List (foldl')
import System.Environment (getArgs)

data Sample = Sample
  { sampleSensor :: !Int
  , sampleCelsius :: !Double
  }

samples :: Int -> [Sample]
samples n = [ Sample (i `mod` 16) (fromIntegral ((i * 7919) `mod` 4000) / 100) | i <- [1 .. n] ]

-- How many samples, and their sum, in one pass: both fields forced at every step.
countAndTotal :: [Sample] -> (Int, Double)
countAndTotal = foldl' step (0, 0)
  where
    step (!count, !total) s = (count + 1, total + sampleCelsius s)

main :: IO ()
main = do
  args <- getArgs
  let n = case args of
        (a : _) -> read a
        [] -> 600000
      (count, total) = countAndTotal (samples n)
  putStrLn ("samples: " ++ show count)
  putStrLn ("mean temperature: " ++ show (total / fromIntegral count))
