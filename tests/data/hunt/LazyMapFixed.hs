-- LazyMap fixed: Data.Map.Strict forces each count as it is inserted.
module Main (main) where

import Data.List (foldl')
import qualified Data.Map.Strict as M
import System.Environment (getArgs)

reading :: Int -> Int
reading n = go (8 :: Int) n
  where
    go 0 acc = acc
    go k acc = let acc' = (acc * 31 + k) `mod` 1000003 in acc' `seq` go (k - 1) acc'

tally :: [Int] -> M.Map Int Int
tally = foldl' (\m x -> M.insertWith (+) (x `mod` 64) x m) M.empty

main :: IO ()
main = do
  args <- getArgs
  let n = case args of (a : _) -> read a; _ -> 50000
  print (sum (M.elems (tally (map reading [1 .. n]))))
