-- The lazy State monad: each modify (+ x) leaves the new state unevaluated, so the state is a
-- chain of thunks as long as the input when execState finally forces it.
-- Control.Monad.State.Strict with modify' keeps it an evaluated Int.
module Main (main) where

import Control.Monad.State (State, execState, modify)
import System.Environment (getArgs)

reading :: Int -> Int
reading n = go (8 :: Int) n
  where
    go 0 acc = acc
    go k acc = let acc' = (acc * 31 + k) `mod` 1000003 in acc' `seq` go (k - 1) acc'

count :: [Int] -> State Int ()
count = mapM_ (\x -> modify (+ x))

main :: IO ()
main = do
  args <- getArgs
  let n = case args of (a : _) -> read a; _ -> 50000
  print (execState (count (map reading [1 .. n])) 0)
