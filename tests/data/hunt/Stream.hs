-- A self-referential stream: the running totals u = 0 : go u xs, each total a thunk on the
-- one before; indexing walks the list without forcing a total, so the last one is a chain as
-- long as the input, forced deep on the stack when printed. Forcing each total as its cell is
-- made keeps the chain one long.
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
    go (a : as) (x : rest) = a + x : go as rest
    go _ _ = []

main :: IO ()
main = do
  args <- getArgs
  let n = case args of (a : _) -> read a; _ -> 90000
  print (running (map reading [1 .. n]) !! n)
