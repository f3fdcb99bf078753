-- A small program for ticky-ticky counters: a few top-level functions that allocate and call one
-- another, so each has its own counter with entries, arguments and allocations.
module Main (main) where

import Data.List (foldl')
import qualified Data.Map.Strict as M
import System.Environment (getArgs)

digits :: Int -> [Int]
digits 0 = []
digits k = k `mod` 10 : digits (k `div` 10)

digitSum :: Int -> Int
digitSum = sum . digits

histogram :: [Int] -> M.Map Int Int
histogram = foldl' (\m k -> M.insertWith (+) k 1 m) M.empty

mostCommon :: M.Map Int Int -> (Int, Int)
mostCommon = M.foldlWithKey' (\best k c -> if c > snd best then (k, c) else best) (0, 0)

main :: IO ()
main = do
  args <- getArgs
  let n = case args of (a:_) -> read a; _ -> 200000
  print (mostCommon (histogram (map digitSum [1 .. n])))
