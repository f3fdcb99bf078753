-- A cache filled and never pruned: every request's answer is stored under its number in a
-- Data.Map held by an IORef, and no request ever looks it up or evicts an entry. The map's
-- evaluated nodes (Bin, I#) grow with the requests, held by the IORef that main made.
module Main (main) where

import Control.Monad (forM_)
import Data.IORef (modifyIORef', newIORef, readIORef)
import qualified Data.Map.Strict as M
import System.Environment (getArgs)

answer :: Int -> Int
answer n = go (8 :: Int) n
  where
    go 0 acc = acc
    go k acc = let acc' = (acc * 31 + k) `mod` 1000003 in acc' `seq` go (k - 1) acc'

remember :: Int -> Int -> M.Map Int Int -> M.Map Int Int
remember = M.insert

main :: IO ()
main = do
  args <- getArgs
  let requests = case args of (a:_) -> read a; _ -> 50000
  cache <- newIORef M.empty
  forM_ [1 .. requests] $ \i -> do
    let a = answer i
    a `seq` modifyIORef' cache (remember i a)
  readIORef cache >>= print . M.size
