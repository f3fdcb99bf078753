module Main (main) where

import Control.Monad (forM_, when)
import Control.Monad.State.Strict (State, execState, modify')
import System.Environment (getArgs)

data Payment = Payment
  { payer :: !Int
  , cents :: !Int
  , country :: !Int
  }

payments :: Int -> [Payment]
payments n = [ Payment ((i * 7919) `mod` 10000) (100 + (i * 31) `mod` 250000) (i `mod` 37) | i <- [1 .. n] ]

-- Writer's log is only added up when it is read, after the whole walk; a strict State with
-- strict counters adds as it goes.
data Audit = Audit !Int !Int !Int

-- The fraud check: count the payments and the money it saw, and the payments it flags.
check :: Payment -> State Audit ()
check p = do
  modify' (\(Audit seen money flagged) -> Audit (seen + 1) (money + cents p) flagged)
  when (cents p > 200000 || country p == 13) $
    modify' (\(Audit seen money flagged) -> Audit seen money (flagged + 1))

-- Check every payment: how many, how much money, how many flagged.
audit :: [Payment] -> (Int, Int, Int)
audit ps = (seen, money, flagged)
  where
    Audit seen money flagged = execState (forM_ ps check) (Audit 0 0 0)

main :: IO ()
main = do
  args <- getArgs
  let n = case args of
        (a : _) -> read a
        [] -> 600000
      (seen, money, flagged) = audit (payments n)
  putStrLn ("payments: " ++ show seen ++ ", " ++ show money ++ " cents")
  putStrLn ("flagged: " ++ show flagged)
