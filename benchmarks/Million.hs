-- A million closures to snapshot (benchmarks/bench_snapshot.py): a Map of 100,000 entries
-- whose values are lists of three Ints (Map.Bin, key, three (:) and three I# each: 800,000
-- closures), and a list of 100,000 lazy values kept in an IORef ((:) and a thunk each:
-- 200,000). Values are made from the command line, so none is static data of the program.
--
--   million OUT     build them, snapshot to OUT, print the snapshot's wall and CPU seconds
module Main (main) where

import Control.Exception (evaluate)
import Data.IORef
import Data.List (foldl')
import qualified Data.Map.Strict as M
import GHC.Clock (getMonotonicTime)
import System.CPUTime (getCPUTime)
import HalvmSnapshot
import System.Environment (getArgs)
import System.Mem (performMajorGC)

lazyValue :: Int -> Int
lazyValue k = sum [1 .. k]
{-# NOINLINE lazyValue #-}

main :: IO ()
main = do
  args <- getArgs
  let out = head args
      base = 1000 + length args
      entries = 100000
      value k = [k, k + base, k + 2 * base]
      table = foldl' (\m k -> let v = value k in sum v `seq` M.insert k v m) M.empty [base .. base + entries - 1]
  _ <- evaluate (M.size table)
  pending <- newIORef []
  mapM_ (\k -> modifyIORef' pending (lazyValue k :)) [base .. base + entries - 1]
  performMajorGC
  start <- getMonotonicTime
  cpu <- getCPUTime
  snapshot out [root "table" table, root "pending" pending]
  cpu' <- getCPUTime
  end <- getMonotonicTime
  putStrLn (show (end - start) ++ " " ++ show (fromIntegral (cpu' - cpu) / 1e12 :: Double))
