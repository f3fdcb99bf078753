module Main (main) where

import Data.List (foldl')
import qualified Data.IntMap.Strict as IntMap
import System.Environment (getArgs)

-- One measured request.
data Sample = Sample
  { sampleEndpoint :: !Int
  , sampleStatus :: !Int
  , sampleMs :: !Int
  }

-- How many requests took each whole number of ms: all the report needs, and bounded by the
-- range of latencies rather than by the number of requests.
data Metrics = Metrics
  { histogram :: !(IntMap.IntMap Int)
  , measured :: !Int
  }

-- Measure a run of requests.
collect :: [Sample] -> Metrics
collect = foldl' observe (Metrics IntMap.empty 0)

observe :: Metrics -> Sample -> Metrics
observe m s = m { histogram = IntMap.insertWith (+) (sampleMs s) 1 (histogram m), measured = measured m + 1 }

-- The latencies under which the given per milles of requests fall.
percentiles :: [Int] -> Metrics -> [Int]
percentiles perMilles m = [ go ((measured m - 1) * p `div` 1000) (IntMap.toAscList (histogram m)) | p <- perMilles ]
  where
    go rank ((ms, count) : rest)
      | rank < count = ms
      | otherwise = go (rank - count) rest
    go _ [] = 0

-- A request: mostly fast, with a slow tail.
request :: Int -> Sample
request i = Sample (i `mod` 40) (if r < 990 then 200 else 503) (if r < 950 then 5 + r `mod` 60 else 100 + (r * 37) `mod` 2900)
  where
    r = (i * 7919 + i `div` 7) `mod` 1000

main :: IO ()
main = do
  args <- getArgs
  let n = case args of
        (a : _) -> read a
        [] -> 650000
      m = collect (map request [1 .. n])
  putStrLn ("requests: " ++ show (measured m))
  putStrLn ("median and p99: " ++ show (percentiles [500, 990] m) ++ " ms")
