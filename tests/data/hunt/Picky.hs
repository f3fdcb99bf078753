-- Accum's leak, in a program that crashes (SIGSEGV, as GHC 9.0.2's -hb run of a list walked
-- twice did) whenever it is run with biographical profiling (+RTS -hb): the hunt must still
-- give a verdict from its other runs and say which mode failed.
module Main (main) where

import Data.List (foldl')
import GHC.RTS.Flags (DoHeapProfile (HeapByLDV), doHeapProfile, getProfFlags)
import System.Environment (getArgs)
import System.Posix.Signals (raiseSignal, sigSEGV)

work :: Int -> Int
work n = go (40 :: Int) n
  where
    go 0 acc = acc
    go k acc = let acc' = (acc * 31 + k) `mod` 1000003 in acc' `seq` go (k - 1) acc'

record :: [Int] -> Int -> [Int]
record logged i = let w = work i in w `seq` (w : logged)

main :: IO ()
main = do
  flags <- getProfFlags
  args <- getArgs
  let n = case args of (a:_) -> read a; _ -> 30000
      logged = foldl' record [] [1 .. n]
  case doHeapProfile flags of
    HeapByLDV -> print (length (take 1000 logged)) >> raiseSignal sigSEGV
    _ -> pure ()
  print (length logged)
