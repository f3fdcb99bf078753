-- A new user's Data.Map cache: each request looks keys up in a map that grows and stores its
-- answer. `expensive` spends its time in twelve small steps (more than lookupC in all, each far
-- less) and in `lookupC`, which holds the most time itself.
module Main (main) where

import Data.List (foldl')
import qualified Data.Map.Strict as M
import System.Environment (getArgs)

spin :: Int -> Int -> Int
spin c k = go (480 :: Int) k
  where
    go 0 acc = acc
    go j acc = go (j - 1) ((acc * c + j) `mod` 1000003)
{-# INLINE spin #-}

step1, step2, step3, step4, step5, step6, step7, step8, step9, step10, step11, step12 :: Int -> Int
step1 = spin 31
step2 = spin 37
step3 = spin 41
step4 = spin 43
step5 = spin 47
step6 = spin 53
step7 = spin 59
step8 = spin 61
step9 = spin 67
step10 = spin 71
step11 = spin 73
step12 = spin 79

prepare :: Int -> Int
prepare k = sum [f k | f <- [step1, step2, step3, step4, step5, step6, step7, step8, step9, step10, step11, step12]]

lookupC :: Int -> M.Map Int Int -> Int
lookupC k m = go (60 :: Int) 0
  where
    go 0 acc = acc
    go j acc = case M.lookup ((k * j) `mod` 5000) m of
      Just v -> go (j - 1) (acc + v)
      Nothing -> go (j - 1) (acc + 1)

expensive :: M.Map Int Int -> Int -> (M.Map Int Int, Int)
expensive m k =
  let v = (prepare k + lookupC k m) `mod` 1000003
   in v `seq` (M.insert (k `mod` 5000) v m, v)

main :: IO ()
main = do
  args <- getArgs
  let n = case args of (a:_) -> read a; _ -> 20000
      run (c, t) k = let (c', v) = expensive c k in c' `seq` (c', t + v)
      (m, total) = foldl' run (M.empty, 0) [1 .. n]
  print (M.size m, total)
