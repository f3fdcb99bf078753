-- Lazy fixed: the total is bumped with modifyIORef', one evaluated Int.
module Main (main) where

import Control.Monad (forM_)
import Data.IORef (modifyIORef', newIORef, readIORef)
import System.Environment (getArgs)

cost :: Int -> Int
cost n = go (8 :: Int) n
  where
    go 0 acc = acc
    go k acc = let acc' = (acc * 31 + k) `mod` 1000003 in acc' `seq` go (k - 1) acc'

main :: IO ()
main = do
  args <- getArgs
  let requests = case args of (a:_) -> read a; _ -> 60000
  total <- newIORef (0 :: Int)
  forM_ [1 .. requests] $ \i -> do
    let c = cost i
    c `seq` modifyIORef' total (+ c)
  readIORef total >>= print
