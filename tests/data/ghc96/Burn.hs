-- CPU-bound work split over a few named functions, for time-profile samples (+RTS -p -l): each
-- runs long enough to be sampled many times at the 1 ms profiling tick, in known proportions.
module Main (main) where

import Data.List (foldl')
import System.Environment (getArgs)

collatzSteps :: Int -> Int
collatzSteps = go 0
  where
    go acc 1 = acc
    go acc m = go (acc + 1) (if even m then m `div` 2 else 3 * m + 1)

longestCollatz :: Int -> Int
longestCollatz n = foldl' (\best i -> max best (collatzSteps i)) 0 [1 .. n]

countPrimes :: Int -> Int
countPrimes n = length [p | p <- [2 .. n], isPrime p]
  where
    isPrime p = all (\d -> p `mod` d /= 0) (takeWhile (\d -> d * d <= p) [2 ..])

sumSquares :: Int -> Int
sumSquares n = foldl' (\acc i -> acc + i * i `mod` 7) 0 [1 .. n]

main :: IO ()
main = do
  args <- getArgs
  let n = case args of (a:_) -> read a; _ -> 100000
  print (longestCollatz n)
  print (countPrimes (n * 2))
  print (sumSquares (n * 20))
