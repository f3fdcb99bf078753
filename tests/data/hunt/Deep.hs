-- Deep non-tail recursion: total adds each reading to the total of the rest, so every step
-- waits on the stack for all the steps after it; the stack grows as long as the input, while
-- the heap holds no chain of thunks (each reading is worked out on the way down). A strict
-- left fold keeps it one frame deep.
module Main (main) where

import System.Environment (getArgs)

reading :: Int -> Int
reading n = go (8 :: Int) n
  where
    go 0 acc = acc
    go k acc = let acc' = (acc * 31 + k) `mod` 1000003 in acc' `seq` go (k - 1) acc'

total :: [Int] -> Int
total [] = 0
total (x : xs) = let r = reading x in r `seq` (r + total xs)

main :: IO ()
main = do
  args <- getArgs
  let n = case args of (a : _) -> read a; _ -> 50000
  print (total [1 .. n])
