-- Logger fixed: the worker keeps a count of its jobs, forced, not their lines.
module Main (main) where

import Control.Concurrent (forkIO, threadDelay)
import Control.Concurrent.MVar (MVar, modifyMVar_, newMVar)
import Control.Monad (forM_, forever, when)

reading :: Int -> Int
reading n = go (8 :: Int) n
  where
    go 0 acc = acc
    go k acc = let acc' = (acc * 31 + k) `mod` 1000003 in acc' `seq` go (k - 1) acc'

worker :: MVar Int -> IO ()
worker done = forM_ [1 ..] $ \i -> do
  let r = reading i
  when (i `mod` 200 == 0) (threadDelay 10000) -- paced as requests come, not as fast as it can
  r `seq` modifyMVar_ done (\c -> return $! c + 1)

main :: IO ()
main = do
  done <- newMVar 0
  _ <- forkIO (worker done)
  forever (threadDelay 100000)
