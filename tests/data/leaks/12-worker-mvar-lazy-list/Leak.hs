module Main (main) where

import Control.Concurrent (forkIO)
import Control.Concurrent.MVar
import Control.Monad (forM_, forever)
import System.Environment (getArgs)

data Event = Event
  { eventSeq :: !Int
  , eventUser :: !Int
  , eventLatency :: !Int
  }

data Message = Record Event | Report (MVar [Event])

-- The monitoring thread: keeps the last 50 events for the dashboard, forever.
monitor :: MVar Message -> MVar [Event] -> IO ()
monitor inbox recent = forever $ do
  msg <- takeMVar inbox
  case msg of
    Record e -> modifyMVar_ recent (\es -> pure (take 50 (e : es)))
    Report reply -> readMVar recent >>= putMVar reply

main :: IO ()
main = do
  args <- getArgs
  let n = case args of
        (a : _) -> read a
        [] -> 600000
  inbox <- newEmptyMVar
  recent <- newMVar []
  _ <- forkIO (monitor inbox recent)
  forM_ (if n == 0 then [1 ..] else [1 .. n]) $ \i ->
    putMVar inbox (Record (Event i ((i * 7919) `mod` 1000) (5 + (i * 31) `mod` 400)))
  reply <- newEmptyMVar
  putMVar inbox (Report reply)
  events <- takeMVar reply
  putStrLn ("events on the dashboard: " ++ show (length events))
  putStrLn ("slowest of them: " ++ show (maximum (map eventLatency events)) ++ " ms")
  putStrLn ("newest: " ++ show (eventSeq (head events)))
