-- Allocates many short-lived cons cells and keeps a small live set, so that with a small
-- allocation area (+RTS -A16k) the RTS collects very often: an eventlog of GC events.
module Main (main) where

import Data.List (foldl')
import System.Environment (getArgs)

step :: [Int] -> Int -> [Int]
step live i = take 64 (i : map (+ 1) live)

main :: IO ()
main = do
  args <- getArgs
  let n = case args of
        (a : _) -> read a
        _ -> 1000000
  let final = foldl' (\acc i -> let l = step acc i in sum l `seq` l) [] [1 .. n]
  print (sum final)
