module Main (main) where

import System.Environment (getArgs)

-- Trade prices of the day, in dollars.
prices :: Int -> [Double]
prices n = [ 100 + fromIntegral ((i * 7919) `mod` 2000) / 100 | i <- [1 .. n] ]

-- Sum and count of the prices.
totals :: [Double] -> (Double, Int)
totals = foldl (\(total, count) p -> (total + p, count + 1)) (0, 0)

-- The day's average price.
average :: [Double] -> Double
average ps = total / fromIntegral count
  where
    (total, count) = totals ps

main :: IO ()
main = do
  args <- getArgs
  let n = case args of
        (a : _) -> read a
        [] -> 600000
  putStrLn ("average price: " ++ show (average (prices n)))
