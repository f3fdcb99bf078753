-- Cache fixed: the cache is bounded; past 256 entries the oldest request's answer is evicted.
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
remember k v m = let m' = M.insert k v m in if M.size m' > 256 then M.deleteMin m' else m'

main :: IO ()
main = do
  args <- getArgs
  let requests = case args of (a:_) -> read a; _ -> 50000
  cache <- newIORef M.empty
  forM_ [1 .. requests] $ \i -> do
    let a = answer i
    a `seq` modifyIORef' cache (remember i a)
  readIORef cache >>= print . M.size
