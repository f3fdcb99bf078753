-- A never-ending worker thread holding an MVar of a lazy list: every job it does adds its log
-- line to a shared list in an MVar, and nothing ever reads or trims the list. The program
-- never ends, as a server does. Keeping a count (or the last lines only) bounds it.
module Main (main) where

import Control.Concurrent (forkIO, threadDelay)
import Control.Concurrent.MVar (MVar, modifyMVar_, newMVar)
import Control.Monad (forM_, forever, when)

reading :: Int -> Int
reading n = go (8 :: Int) n
  where
    go 0 acc = acc
    go k acc = let acc' = (acc * 31 + k) `mod` 1000003 in acc' `seq` go (k - 1) acc'

worker :: MVar [String] -> IO ()
worker logs = forM_ [1 ..] $ \i -> do
  let r = reading i
  when (i `mod` 200 == 0) (threadDelay 10000) -- paced as requests come, not as fast as it can
  let line = "job " ++ show i ++ ": " ++ show r
  length line `seq` modifyMVar_ logs (\ls -> return (line : ls))

main :: IO ()
main = do
  logs <- newMVar []
  _ <- forkIO (worker logs)
  forever (threadDelay 100000)
