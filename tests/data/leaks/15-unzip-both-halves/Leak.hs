module Main (main) where

import System.Environment (getArgs)

-- One line of a web server's access log: when (ms since start) and how many bytes.
data Hit = Hit
  { hitTime :: !Int
  , hitBytes :: !Int
  }

accessLog :: Int -> [Hit]
accessLog n = [ Hit (i * 3 + (i * 7919) `mod` 3) (300 + (i * 31) `mod` 60000) | i <- [1 .. n] ]

-- How long the log runs, the bytes served, and the largest response.
logStats :: [Hit] -> (Int, Int, Int)
logStats hits = (last times - head times, sum sizes, maximum sizes)
  where
    (times, sizes) = unzip [ (hitTime h, hitBytes h) | h <- hits ]

main :: IO ()
main = do
  args <- getArgs
  let n = case args of
        (a : _) -> read a
        [] -> 400000
      (duration, bytes, largest) = logStats (accessLog n)
  putStrLn ("log covers " ++ show duration ++ " ms")
  putStrLn ("bytes served: " ++ show bytes)
  putStrLn ("largest response: " ++ show largest)
