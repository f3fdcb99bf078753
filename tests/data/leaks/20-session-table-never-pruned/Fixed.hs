module Main (main) where

import Data.List (foldl')
import qualified Data.Map.Strict as Map
import System.Environment (getArgs)

data Session = Session
  { sessionUser :: !Int
  , sessionClient :: !String
  , sessionMessages :: !Int
  , sessionOpen :: !Bool
  }

data Server = Server
  { sessions :: !(Map.Map Int Session)
  , delivered :: !Int
  }

clientName :: Int -> String
clientName user = "chat-client/" ++ show (3 + user `mod` 4) ++ "." ++ show (user `mod` 17) ++ " (linux; x86_64)"

login :: Int -> Int -> Server -> Server
login sid user server =
  let client = clientName user
   in length client `seq` server { sessions = Map.insert sid (Session user client 0 True) (sessions server) }

-- A closed session is never looked at again: it leaves the table.
logout :: Int -> Server -> Server
logout sid server = server { sessions = Map.delete sid (sessions server) }

message :: Int -> Server -> Server
message sid server = case Map.lookup sid (sessions server) of
  Just s | sessionOpen s ->
    server { sessions = Map.insert sid s { sessionMessages = sessionMessages s + 1 } (sessions server)
           , delivered = delivered server + 1 }
  _ -> server

-- One tick of the chat server: a user logs in, the session opened 20 ticks ago logs out, and
-- one of the open sessions sends a message.
tick :: Server -> Int -> Server
tick server t = message (t - (t * 7919) `mod` 20) (logout (t - 20) (login t ((t * 31) `mod` 5000) server))

main :: IO ()
main = do
  args <- getArgs
  let n = case args of
        (a : _) -> read a
        [] -> 75000
      server = foldl' tick (Server Map.empty 0) [1 .. n]
      open = Map.filter sessionOpen (sessions server)
  putStrLn ("open sessions: " ++ show (Map.size open))
  putStrLn ("messages delivered: " ++ show (delivered server))
  putStrLn ("messages in open sessions: " ++ show (sum (map sessionMessages (Map.elems open))))
