module Main (main) where

import Control.Monad (forM_, when)
import Control.Monad.State.Strict (State, execState, modify')
import System.Environment (getArgs)

-- Strict fields: modify' forces the record, and the record forces its counters.
data Inventory = Inventory
  { stock :: !Int
  , shipped :: !Int
  , bulkOrders :: !Int
  }

-- One order: take the units out of stock; count the bulk orders apart.
order :: Int -> State Inventory ()
order units = do
  modify' (\inv -> inv { stock = stock inv - units, shipped = shipped inv + units })
  when (units > 90) $
    modify' (\inv -> inv { bulkOrders = bulkOrders inv + 1 })

simulate :: Int -> Inventory
simulate n = execState (forM_ [1 .. n] (\i -> order ((i * 7919) `mod` 100))) (Inventory 100000000 0 0)

main :: IO ()
main = do
  args <- getArgs
  let n = case args of
        (a : _) -> read a
        [] -> 600000
      inv = simulate n
  putStrLn ("stock left: " ++ show (stock inv))
  putStrLn ("shipped: " ++ show (shipped inv))
  putStrLn ("bulk orders: " ++ show (bulkOrders inv))
