-- Four heap bands that grow linearly (as in Grow.hs) until +RTS -M is exceeded; the RTS then
-- throws HeapOverflow to main, whose handler catches it, as a server's top-level handler would,
-- and works on a while before it exits. What the loop kept is garbage by then, so the censuses
-- taken in the handler show the heap fallen at once from its peak to next to nothing.
module Main (main) where

import Control.Exception (AsyncException (HeapOverflow), catch, evaluate, throwIO)
import Data.List (foldl')
import System.Environment (getArgs)
import System.Exit (ExitCode (ExitFailure), exitWith)
import System.IO (hPutStrLn, stderr)

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
  let rounds = case args of (a:_) -> read a; _ -> 100
      loop :: Int -> [[Int]] -> IO Int
      loop r kept
        | r >= rounds = return (length kept)
        | otherwise = do
            let new = [chunkA r, chunkB r, chunkC r, chunkD r]
            _ <- evaluate (foldl' (+) 0 (map (foldl' (+) 0) new))
            _ <- evaluate (busy r)
            loop (r + 1) (new ++ kept)
  n <- loop 0 [] `catch` \e -> case e of
    HeapOverflow -> do
      _ <- evaluate (foldl' (+) 0 (map busy [1 .. 30]))
      hPutStrLn stderr "collapse: heap exhausted; the handler cleaned up"
      exitWith (ExitFailure 2)
    _ -> throwIO e
  print n
