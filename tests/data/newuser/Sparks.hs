-- A new user's -N2 program: a parallel fib by sparks, whose Integer sums allocate enough for a
-- few dozen collections (parallel ones from -N2 on).
module Main (main) where

import GHC.Conc (par, pseq)
import System.Environment (getArgs)

pfib :: Int -> Integer
pfib n
  | n < 20 = sfib n
  | otherwise = let a = pfib (n - 1); b = pfib (n - 2) in a `par` (b `pseq` (a + b))

sfib :: Int -> Integer
sfib n = if n < 2 then toInteger n else sfib (n - 1) + sfib (n - 2)

main :: IO ()
main = do
  args <- getArgs
  let n = case args of (a:_) -> read a; _ -> 28
  print (sum [pfib k | k <- [n - 3 .. n]])
