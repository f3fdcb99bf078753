module Main (main) where

import Control.Monad (forM_)
import Data.IORef (IORef, modifyIORef, newIORef, readIORef)
import System.Environment (getArgs)

data Request = Request
  { reqPath :: !Int
  , reqBytes :: !Int
  }

-- The server's running totals, for its status page: requests served and bytes sent.
type Stats = IORef (Int, Int)

record :: Stats -> Request -> IO ()
record stats req = modifyIORef stats (\(count, bytes) -> (count + 1, bytes + reqBytes req))

serve :: Stats -> Int -> IO ()
serve stats i = record stats (Request ((i * 7919) `mod` 1000) (200 + (i * 31) `mod` 9000))

main :: IO ()
main = do
  args <- getArgs
  let n = case args of
        (a : _) -> read a
        [] -> 500000
  stats <- newIORef (0, 0)
  forM_ [1 .. n] (serve stats)
  (count, bytes) <- readIORef stats
  putStrLn ("requests: " ++ show count)
  putStrLn ("bytes sent: " ++ show bytes)
