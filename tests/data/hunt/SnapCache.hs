-- Cache.hs's leak (a cache filled and never pruned), in a program built with the HalvmSnapshot
-- module: it answers SIGUSR2 with a heap snapshot, so the hunt can say through which path the
-- cache holds what grows. In the hunt's run that asks for snapshots (HALVM_SNAPSHOT_DIR set,
-- no heap profile), the program waits, once the cache is full, for one more snapshot before
-- it ends, so one is always taken of the whole cache (a test never depends on a time).
module Main (main) where

import Control.Concurrent (threadDelay)
import Control.Monad (forM_, when)
import Data.IORef (modifyIORef', newIORef, readIORef)
import Data.List (isSuffixOf)
import qualified Data.Map.Strict as M
import HalvmSnapshot
import System.Directory (getDirectoryContents)
import System.Environment (getArgs, lookupEnv)
import GHC.RTS.Flags (DoHeapProfile (NoHeapProfiling), doHeapProfile, getProfFlags)

answer :: Int -> Int
answer n = go (40 :: Int) n
  where
    go 0 acc = acc
    go k acc = let acc' = (acc * 31 + k) `mod` 1000003 in acc' `seq` go (k - 1) acc'

remember :: Int -> Int -> M.Map Int Int -> M.Map Int Int
remember = M.insert

heapProfiled :: DoHeapProfile -> Bool
heapProfiled NoHeapProfiling = False
heapProfiled _ = True

snapshots :: FilePath -> IO Int
snapshots dir = length . filter (".hsnap" `isSuffixOf`) <$> getDirectoryContents dir

main :: IO ()
main = do
  args <- getArgs
  let requests = case args of (a:_) -> read a; _ -> 30000
  cache <- newIORef M.empty
  snapshotOnSignal "." [root "cache" cache]
  forM_ [1 .. requests] $ \i -> do
    let a = answer i
    a `seq` modifyIORef' cache (remember i a)
  asked <- lookupEnv "HALVM_SNAPSHOT_DIR"
  profiling <- heapProfiled . doHeapProfile <$> getProfFlags
  case asked of
    Just dir | not profiling -> do
      before <- snapshots dir
      let wait = do
            now <- snapshots dir
            when (now <= before) (threadDelay 20000 >> wait)
      wait
    _ -> return ()
  readIORef cache >>= print . M.size
