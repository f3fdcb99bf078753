-- Stream fixed: each running total is forced when its cell is made.
module Main (main) where

import System.Environment (getArgs)

reading :: Int -> Int
reading n = go (8 :: Int) n
  where
    go 0 acc = acc
    go k acc = let acc' = (acc * 31 + k) `mod` 1000003 in acc' `seq` go (k - 1) acc'

running :: [Int] -> [Int]
running xs = u
  where
    u = 0 : go u xs
    go (a : as) (x : rest) = let t = a + x in t `seq` (t : go as rest)
    go _ _ = []

main :: IO ()
main = do
  args <- getArgs
  let n = case args of (a : _) -> read a; _ -> 90000
  print (running (map reading [1 .. n]) !! n)
