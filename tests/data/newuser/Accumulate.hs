-- A new user's leak: an accumulator that only grows, built in nested lambdas, so that its -hc
-- bands (with -fprof-auto) have cost-centre stacks longer than GHC's default +RTS -L25.
module Main (main) where

import Control.Monad (forM_, when)
import Data.IORef (modifyIORef, newIORef, readIORef)
import System.Environment (getArgs)

remember :: Int -> [Int] -> [Int]
remember i acc = (i * 7 `mod` 13) : acc

accumulate :: Int -> IO [Int]
accumulate n = do
  ref <- newIORef []
  forM_ [1 .. n] $ \i -> do
    modifyIORef ref (\acc -> remember i acc)
    when (i `mod` 50000 == 0) $ readIORef ref >>= \acc -> print (length acc)
  readIORef ref

main :: IO ()
main = do
  args <- getArgs
  let n = case args of (a:_) -> read a; _ -> 300000
  accumulate n >>= print . sum
