-- A big structure kept after its last use: the readings are counted, then put in an IORef
-- "for later", and the program works on for as long again while nothing reads them; only a
-- last glance at the end keeps them alive all that time. Keeping the count, not the list,
-- lets them go once counted.
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
  let n = case args of (a : _) -> read a; _ -> 50000
  kept <- newIORef []
  let readings = map reading [1 .. n]
  print (length readings)
  writeIORef kept readings
  print (foldl' (\acc i -> (acc + reading i) `mod` 1000003) 0 [1 .. n])
  readIORef kept >>= print . null
