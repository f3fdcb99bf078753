module Main (main) where

import Control.Concurrent (forkIO)
import Control.Concurrent.MVar
import Control.Exception (evaluate)
import Control.Monad (forM_, forever)
import System.Environment (getArgs)

data Event = Event
  { eventSeq :: !Int
  , eventUser :: !Int
  , eventLatency :: !Int
  }

data Message = Record Event | Report (MVar [Event])

-- Evaluate the whole spine of a list before it is stored.
forceSpine :: [a] -> IO [a]
forceSpine xs = evaluate (length xs) >> pure xs

-- The monitoring thread: keeps the last 50 events for the dashboard, forever. The list is
-- cut to 50 when it is stored, not when the dashboard looks at it.
monitor :: MVar Message -> MVar [Event] -> IO ()
monitor inbox recent = forever $ do
  msg <- takeMVar inbox
  case msg of
    Record e -> modifyMVar_ recent (\es -> forceSpine (take 50 (e : es)))
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
