-- A program that ends at once: under a threaded GHC 9.6/9.10 RTS with a timed eventlog
-- flush, its exit often meets the first flush, which deadlocks that RTS (run kills it).
module Main (main) where

main :: IO ()
main = print (sum [1 .. 100000 :: Int])
