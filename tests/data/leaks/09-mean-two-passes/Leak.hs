module Main (main) where

import System.Environment (getArgs)

-- Response times in milliseconds, parsed from a load test's log.
responseTimes :: Int -> [Double]
responseTimes n = [ fromIntegral (20 + (i * 7919) `mod` 480) / 4 | i <- [1 .. n] ]

mean :: [Double] -> Double
mean xs = sum xs / fromIntegral (length xs)

main :: IO ()
main = do
  args <- getArgs
  let n = case args of
        (a : _) -> read a
        [] -> 1000000
  putStrLn ("mean response time: " ++ show (mean (responseTimes n)) ++ " ms")
