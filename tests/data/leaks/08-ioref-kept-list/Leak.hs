module Main (main) where

import Data.IORef (newIORef, readIORef, writeIORef)
import Data.List (foldl')
import qualified Data.Map.Strict as Map
import System.Environment (getArgs)

data Order = Order
  { orderId :: !Int
  , orderCustomer :: !Int
  , orderCents :: !Int
  }

loadOrders :: Int -> [Order]
loadOrders n = [ Order (100000 + i) ((i * 7919) `mod` 5000) (99 + (i * 31) `mod` 20000) | i <- [1 .. n] ]

-- Count and revenue of a batch, in one pass.
tally :: [Order] -> (Int, Int)
tally = foldl' (\(count, cents) o -> count `seq` cents `seq` (count + 1, cents + orderCents o)) (0, 0)

-- The nightly settlement of the accounts' transfers: does not look at the orders.
settle :: Int -> Map.Map Int Int
settle m = foldl' transfer Map.empty [1 .. m]
  where
    transfer balances k = Map.insertWith (+) ((k * 7919) `mod` 1000) ((k * 31) `mod` 200 - 100) balances

main :: IO ()
main = do
  args <- getArgs
  let n = case args of
        (a : _) -> read a
        [] -> 500000
  lastBatch <- newIORef []
  let orders = loadOrders n
  writeIORef lastBatch orders
  let (count, cents) = tally orders
  putStrLn ("orders: " ++ show count ++ ", revenue: " ++ show cents ++ " cents")
  putStrLn ("accounts settled: " ++ show (Map.size (Map.filter (> 0) (settle (2 * n)))))
  batch <- readIORef lastBatch
  putStrLn ("the batch began with order " ++ show (orderId (head batch)))
