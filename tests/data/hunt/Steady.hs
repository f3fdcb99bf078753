-- No leak: the same work as the others, summed as it goes with a strict fold; the heap holds
-- nothing that grows.
module Main (main) where

import Data.List (foldl')
import System.Environment (getArgs)

work :: Int -> Int
work n = go (8 :: Int) n
  where
    go 0 acc = acc
    go k acc = let acc' = (acc * 31 + k) `mod` 1000003 in acc' `seq` go (k - 1) acc'

main :: IO ()
main = do
  args <- getArgs
  let n = case args of (a:_) -> read a; _ -> 100000
  print (foldl' (\acc i -> (acc + work i) `mod` 1000003) 0 [1 .. n])
