-- Accum's leak, in a program that crashes (SIGSEGV, as GHC 9.0.2's -hb run of a list walked
-- twice did) whenever it is run with biographical profiling (+RTS -hb): the hunt must still
-- give a verdict from its other runs and say which mode failed. With the argument "-" it reads
-- its size from standard input, which every run of a hunt must get alike. With "hang" it never
-- ends when run with +RTS -hy, for a mode that times out.
module Main (main) where

import Control.Concurrent (threadDelay)
import Control.Monad (forever)
import Data.List (foldl')
import GHC.RTS.Flags (DoHeapProfile (HeapByLDV, HeapByType), doHeapProfile, getProfFlags)
import System.Environment (getArgs)
import System.Posix.Signals (raiseSignal, sigSEGV)

work :: Int -> Int
work n = go (8 :: Int) n
  where
    go 0 acc = acc
    go k acc = let acc' = (acc * 31 + k) `mod` 1000003 in acc' `seq` go (k - 1) acc'

record :: [Int] -> Int -> [Int]
record logged i = let w = work i in w `seq` (w : logged)

main :: IO ()
main = do
  flags <- getProfFlags
  given <- getArgs
  let hang = "hang" `elem` given
      args = filter (/= "hang") given
  n <- case args of
    ["-"] -> readLn
    (a:_) -> pure (read a)
    _ -> pure 100000
  let logged = foldl' record [] [1 .. n]
  case doHeapProfile flags of
    HeapByLDV -> print (length (take 1000 logged)) >> raiseSignal sigSEGV
    HeapByType | hang -> print (length logged) >> forever (threadDelay 100000)
    _ -> pure ()
  print (length logged)
