-- Parallel work, sparks, blocking on MVars and channels, nested user spans and markers:
-- the runtime timeline's test program (halvm-prof tests/data/eventlog/ghc/make-fixtures.sh).
module Main (main) where

import Control.Concurrent (forkIO, newChan, newEmptyMVar, putMVar, readChan, takeMVar, threadDelay, writeChan)
import Control.Monad (forM_, replicateM)
import Debug.Trace (traceEventIO, traceMarkerIO)
import GHC.Conc (labelThread, myThreadId, par, pseq)
import System.Environment (getArgs)

-- Integer arithmetic allocates, so the run has many collections.
pfib :: Int -> Integer
pfib n
  | n < 12 = sfib n
  | otherwise = let a = pfib (n - 1); b = pfib (n - 2) in a `par` (b `pseq` a + b + 1)

sfib :: Int -> Integer
sfib n = if n < 2 then 1 else sfib (n - 1) + sfib (n - 2) + 1

main :: IO ()
main = do
  n <- fmap (\a -> case a of (x:_) -> read x; _ -> 22) getArgs
  traceMarkerIO "begin"
  ch <- newChan
  done <- newEmptyMVar
  _ <- forkIO $ do
    myThreadId >>= flip labelThread "producer"
    traceEventIO "START producer"
    forM_ [1 .. 200 :: Int] $ \i -> do
      writeChan ch (sfib (i `mod` 12))
      if i `mod` 50 == 0 then threadDelay 500 else pure ()
    traceEventIO "STOP producer"
  _ <- forkIO $ do
    myThreadId >>= flip labelThread "consumer"
    traceEventIO "START consumer"
    xs <- replicateM 200 (readChan ch)
    traceEventIO "STOP consumer"
    putMVar done (sum xs)
  traceEventIO "START compute"
  traceEventIO "START pfib"
  print (pfib n)
  traceEventIO "STOP pfib"
  traceMarkerIO "pfib done"
  traceEventIO "START pfib2"
  print (pfib (n - 2))
  traceEventIO "STOP pfib2"
  traceEventIO "STOP compute"
  total <- takeMVar done
  print total
  traceMarkerIO "end"
