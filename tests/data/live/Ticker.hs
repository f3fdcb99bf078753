-- A program to watch live: it keeps a growing map for N rounds of busy work, traces events
-- (enough to fill the RTS's eventlog buffers while it runs, yet few enough for a live reader)
-- and, when asked, crashes at the end instead of exiting normally. With "wait", it waits at
-- the end until a file named "release" exists in its folder, so a test decides when it ends.
module Main (main) where

import Control.Concurrent (forkOn, threadDelay)
import Control.Exception (evaluate)
import Control.Monad (forM_, unless, when)
import Data.List (foldl')
import qualified Data.Map.Strict as M
import Debug.Trace (traceEventIO)
import System.Directory (doesFileExist)
import System.Environment (getArgs)
import System.IO (hFlush, stdout)

busy :: Int -> Int
busy r = foldl' (+) 0 [ (x * x) `mod` 7 | x <- [r .. r + 10000000] ]

grow :: M.Map Int String -> Int -> IO (M.Map Int String)
grow m r = do
  let keys = [r * 10000 .. r * 10000 + 9999]
      m' = foldr (\k acc -> M.insert k (show k ++ "-payload") acc) m keys
  _ <- evaluate (M.size m')
  forM_ keys $ \k -> when (k `mod` 4 == 0) (traceEventIO ("tick " ++ show k))
  return m'

main :: IO ()
main = do
  args <- getArgs
  let rounds = case args of (a:_) -> read a; _ -> 30
      crash = "crash" `elem` drop 1 args
  -- A second thread on the second capability (with -N2) that traces as busily, so both
  -- capabilities hand over eventlog buffers while the program runs.
  _ <- forkOn 1 $ forM_ [1 :: Int ..] $ \i -> do
    traceEventIO ("side " ++ show i)
    when (i `mod` 50 == 0) (threadDelay 1000)
  let loop m r
        | r >= rounds = return m
        | otherwise = do
            m' <- grow m r
            putStrLn ("round " ++ show r ++ " keys " ++ show (M.size m'))
            hFlush stdout
            -- Busy, not asleep: a profiled RTS takes heap censuses by CPU time.
            _ <- evaluate (busy r)
            loop m' (r + 1)
  m <- loop M.empty 0
  when ("wait" `elem` drop 1 args) waitForRelease
  when crash (error ("crashed after " ++ show rounds ++ " rounds"))
  print (M.size m)

waitForRelease :: IO ()
waitForRelease = do
  released <- doesFileExist "release"
  unless released (threadDelay 20000 >> waitForRelease)
