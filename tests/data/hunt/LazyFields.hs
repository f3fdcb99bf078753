-- Lazy fields under foldl': the fold forces each Stats to its constructor, but its fields
-- stay lazy, so each field is a chain of (+) thunks as long as the input, forced when printed.
-- Strict fields (!Int) make foldl' enough.
module Main (main) where

import Data.List (foldl')
import System.Environment (getArgs)

reading :: Int -> Int
reading n = go (8 :: Int) n
  where
    go 0 acc = acc
    go k acc = let acc' = (acc * 31 + k) `mod` 1000003 in acc' `seq` go (k - 1) acc'

data Stats = Stats Int Int

add :: Stats -> Int -> Stats
add (Stats s c) x = Stats (s + x) (c + 1)

main :: IO ()
main = do
  args <- getArgs
  let n = case args of (a : _) -> read a; _ -> 50000
      Stats s c = foldl' add (Stats 0 0) (map reading [1 .. n])
  print (s, c)
