-- A new user's server-like program: it allocates a little, then waits (polling every 50 ms)
-- until a file named "release" exists in its folder, writing next to nothing to its
-- eventlog meanwhile, so a page watching it sees no eventlog block until it ends.
module Main (main) where

import Control.Concurrent (threadDelay)
import Control.Monad (unless)
import System.Directory (doesFileExist)

main :: IO ()
main = do
  print (sum [1 .. 100000 :: Integer])
  let wait = do
        released <- doesFileExist "release"
        unless released (threadDelay 50000 >> wait)
  wait
