-- HeldRef fixed: only the count is kept; the readings go once counted.
module Main (main) where

import Data.IORef (newIORef, readIORef, writeIORef)
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
  let n = case args of (a : _) -> read a; _ -> 100000
  kept <- newIORef 0
  let readings = map reading [1 .. n]
      counted = length readings
  print counted
  writeIORef kept counted
  print (foldl' (\acc i -> (acc + reading i) `mod` 1000003) 0 [1 .. n])
  readIORef kept >>= print . (== 0)
