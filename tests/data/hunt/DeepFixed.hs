-- Deep fixed: a strict left fold, one frame deep.
module Main (main) where

import Data.List (foldl')
import System.Environment (getArgs)

reading :: Int -> Int
reading n = go (8 :: Int) n
  where
    go 0 acc = acc
    go k acc = let acc' = (acc * 31 + k) `mod` 1000003 in acc' `seq` go (k - 1) acc'

main :: IO ()
main = do
  args <- getArgs
  let n = case args of (a : _) -> read a; _ -> 50000
  print (foldl' (\acc x -> acc + reading x) 0 [1 .. n])
