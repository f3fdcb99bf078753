module Main (main) where

import Control.Monad (forM_, when)
import Control.Monad.Writer (Writer, execWriter, tell)
import Data.Monoid (Sum (..))
import System.Environment (getArgs)

data Payment = Payment
  { payer :: !Int
  , cents :: !Int
  , country :: !Int
  }

payments :: Int -> [Payment]
payments n = [ Payment ((i * 7919) `mod` 10000) (100 + (i * 31) `mod` 250000) (i `mod` 37) | i <- [1 .. n] ]

-- The fraud check: count the payments and the money it saw, and the payments it flags.
check :: Payment -> Writer (Sum Int, Sum Int, Sum Int) ()
check p = do
  tell (Sum 1, Sum (cents p), Sum 0)
  when (cents p > 200000 || country p == 13) $
    tell (Sum 0, Sum 0, Sum 1)

-- Check every payment: how many, how much money, how many flagged.
audit :: [Payment] -> (Int, Int, Int)
audit ps = (seen, money, flagged)
  where
    (Sum seen, Sum money, Sum flagged) = execWriter (forM_ ps check)

main :: IO ()
main = do
  args <- getArgs
  let n = case args of
        (a : _) -> read a
        [] -> 600000
      (seen, money, flagged) = audit (payments n)
  putStrLn ("payments: " ++ show seen ++ ", " ++ show money ++ " cents")
  putStrLn ("flagged: " ++ show flagged)
