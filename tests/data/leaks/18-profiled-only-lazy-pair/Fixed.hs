module Main (main) where

import Data.List (foldl')
import System.Environment (getArgs)

-- Trade prices of the day, in dollars.
prices :: Int -> [Double]
prices n = [ 100 + fromIntegral ((i * 7919) `mod` 2000) / 100 | i <- [1 .. n] ]

-- The running sum and count, both strict: the fold does not rely on the optimiser to see that
-- the caller needs both.
data Totals = Totals !Double !Int

-- Sum and count of the prices.
totals :: [Double] -> (Double, Int)
totals ps = case foldl' (\(Totals total count) p -> Totals (total + p) (count + 1)) (Totals 0 0) ps of
  Totals total count -> (total, count)

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
