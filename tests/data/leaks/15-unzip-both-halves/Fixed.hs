module Main (main) where

import Data.List (foldl')
import System.Environment (getArgs)

-- One line of a web server's access log: when (ms since start) and how many bytes.
data Hit = Hit
  { hitTime :: !Int
  , hitBytes :: !Int
  }

accessLog :: Int -> [Hit]
accessLog n = [ Hit (i * 3 + (i * 7919) `mod` 3) (300 + (i * 31) `mod` 60000) | i <- [1 .. n] ]

-- Everything the report needs, taken in the one walk over the log.
data Summary = Summary
  { firstTime :: !Int
  , lastTime :: !Int
  , totalBytes :: !Int
  , largest :: !Int
  }

-- How long the log runs, the bytes served, and the largest response.
logStats :: [Hit] -> (Int, Int, Int)
logStats [] = (0, 0, 0)
logStats (h : hs) = case foldl' step (Summary (hitTime h) (hitTime h) (hitBytes h) (hitBytes h)) hs of
  s -> (lastTime s - firstTime s, totalBytes s, largest s)
  where
    step s x = s { lastTime = hitTime x, totalBytes = totalBytes s + hitBytes x, largest = max (largest s) (hitBytes x) }

main :: IO ()
main = do
  args <- getArgs
  let n = case args of
        (a : _) -> read a
        [] -> 400000
      (duration, bytes, biggest) = logStats (accessLog n)
  putStrLn ("log covers " ++ show duration ++ " ms")
  putStrLn ("bytes served: " ++ show bytes)
  putStrLn ("largest response: " ++ show biggest)
