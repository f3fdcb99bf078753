-- 160 user markers ("tick N"), one after each stretch of busy work, so they spread over the run
-- as a program's progress markers do.
module Main (main) where

import Control.Exception (evaluate)
import Control.Monad (forM_)
import Data.List (foldl')
import Debug.Trace (traceMarkerIO)

busy :: Int -> Int
busy r = foldl' (+) 0 [ (x * x) `mod` 7 | x <- [r .. r + 200000] ]

main :: IO ()
main = do
  forM_ [1 .. 160 :: Int] $ \i -> do
    _ <- evaluate (busy i)
    traceMarkerIO ("tick " ++ show i)
  putStrLn "done"
