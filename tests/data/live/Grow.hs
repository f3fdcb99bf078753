-- Four heap bands that grow linearly: each round adds one fully evaluated chunk to each of four
-- cost centres (chunkA .. chunkD), with busy work in between so the profiled RTS (whose
-- censuses follow CPU time) takes censuses all along. It exits normally after N rounds; run with
-- +RTS -M below what N rounds keep and the heap is exhausted before the end.
module Main (main) where

import Control.Exception (evaluate)
import Data.IORef (newIORef, writeIORef)
import Data.List (foldl')
import Foreign.StablePtr (newStablePtr)
import System.Environment (getArgs)

chunkA, chunkB, chunkC, chunkD :: Int -> [Int]
chunkA r = [r .. r + 2000]
{-# NOINLINE chunkA #-}
chunkB r = [r + 1 .. r + 2001]
{-# NOINLINE chunkB #-}
chunkC r = [r + 2 .. r + 2002]
{-# NOINLINE chunkC #-}
chunkD r = [r + 3 .. r + 2003]
{-# NOINLINE chunkD #-}

busy :: Int -> Int
busy r = foldl' (+) 0 [ (x * x) `mod` 7 | x <- [r .. r + 1500000] ]

main :: IO ()
main = do
  args <- getArgs
  -- What is kept so far is also held from a stable pointer, a root to the very end: when -M is
  -- exceeded, the RTS throws HeapOverflow to main, and without it the unwound loop would free
  -- everything before GHC's last census (a census that does not show the exhausted heap).
  held <- newIORef []
  _ <- newStablePtr held
  let rounds = case args of (a:_) -> read a; _ -> 100
      loop :: Int -> [[Int]] -> IO [[Int]]
      loop r kept
        | r >= rounds = return kept
        | otherwise = do
            let new = [chunkA r, chunkB r, chunkC r, chunkD r]
            _ <- evaluate (foldl' (+) 0 (map (foldl' (+) 0) new))
            _ <- evaluate (busy r)
            writeIORef held (new ++ kept)
            loop (r + 1) (new ++ kept)
  kept <- loop 0 []
  -- Kept to the end, as a long-running server keeps its state: a stable pointer is a root even
  -- in the RTS's last collection at exit.
  _ <- newStablePtr kept
  print (length kept)
