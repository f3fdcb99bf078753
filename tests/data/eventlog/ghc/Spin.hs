-- Runs until killed: threads that yield and trace, for eventlogs of killed programs.
module Main (main) where

import Control.Concurrent (forkIO, yield)
import Control.Monad (forM_, forever)
import Debug.Trace (traceEventIO)

main :: IO ()
main = do
  forM_ [1 :: Int .. 4] $ \i -> forkIO $ forever $ do
    traceEventIO ("tick " ++ show i)
    yield
  forever $ do
    traceEventIO "main"
    yield
