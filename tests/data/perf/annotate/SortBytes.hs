-- ByteString sorting for `perf annotate` (tests/annotate_recordings.py): many short
-- strings compared and sorted, so the hot code is bytestring's compareBytes and the sort.
module Main (main) where

import qualified Data.ByteString.Char8 as B
import Data.List (sort)
import System.Environment (getArgs)

-- Pseudo-random keys with long common prefixes, so every comparison reads several bytes.
keys :: Int -> [B.ByteString]
keys n = [B.pack ("key-" ++ show ((k * 2654435761) `rem` 1000003) ++ "-x") | k <- [1 .. n]]

main :: IO ()
main = do
  args <- getArgs
  let scale = case args of
        (a : _) -> read a
        _ -> 1 :: Int
      sorted = sort (keys (120000 * scale))
  print (length sorted, B.length (head sorted), B.length (last sorted))
  print (sum (map B.length (sort (map B.reverse sorted))))
