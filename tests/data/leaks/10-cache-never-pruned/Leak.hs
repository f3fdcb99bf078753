module Main (main) where

import Data.List (foldl')
import qualified Data.Map.Strict as Map
import System.Environment (getArgs)

-- A fare quote: the minute it was asked for (prices change every minute) and the route.
data Quote = Quote
  { quoteMinute :: !Int
  , quoteRoute :: !Int
  }

-- A priced itinerary: the price of each leg, and their total.
data Fare = Fare
  { fareTotal :: !Int
  , fareLegs :: ![Int]
  }

-- The expensive part: pricing every leg of a route at a given minute.
price :: Int -> Int -> Fare
price minute route = Fare (sum legs) legs
  where
    legs = [ foldl' (\acc k -> (acc * 33 + k + route) `mod` 100003) (minute + leg) [1 .. 8] | leg <- [1 .. 12] ]

data Server = Server
  { fares :: !(Map.Map (Int, Int) Fare)
  , hits :: !Int
  , revenue :: !Int
  }

-- Answer one quote, from the cache when this route was priced this minute already.
answer :: Server -> Quote -> Server
answer server (Quote minute route) =
  case Map.lookup (minute, route) (fares server) of
    Just fare -> server { hits = hits server + 1, revenue = revenue server + fareTotal fare }
    Nothing ->
      let fare = price minute route
       in server { fares = Map.insert (minute, route) fare (fares server), revenue = revenue server + fareTotal fare }

quotes :: Int -> [Quote]
quotes n = [ Quote (i `div` 2000) ((i * 7919) `mod` 1000) | i <- [1 .. n] ]

main :: IO ()
main = do
  args <- getArgs
  let n = case args of
        (a : _) -> read a
        [] -> 120000
      server = foldl' answer (Server Map.empty 0 0) (quotes n)
  putStrLn ("quotes: " ++ show n ++ ", answered from the cache: " ++ show (hits server))
  putStrLn ("revenue: " ++ show (revenue server))
