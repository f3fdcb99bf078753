module Main (main) where

import qualified Data.Map as Map
import Data.List (foldl')
import System.Environment (getArgs)

-- Page views from an access log: (page, bytes sent).
views :: Int -> [(Int, Int)]
views n = [ ((i * 7919) `mod` 500, 512 + (i * 31) `mod` 4096) | i <- [1 .. n] ]

-- Bytes sent per page.
bytesPerPage :: [(Int, Int)] -> Map.Map Int Int
bytesPerPage = foldl' add Map.empty
  where
    add counts (page, bytes) = Map.insertWith (+) page bytes counts

main :: IO ()
main = do
  args <- getArgs
  let n = case args of
        (a : _) -> read a
        [] -> 500000
      perPage = bytesPerPage (views n)
  putStrLn ("pages: " ++ show (Map.size perPage))
  putStrLn ("busiest page: " ++ show (maximum (map snd (Map.toList perPage))) ++ " bytes")
  putStrLn ("total: " ++ show (sum (Map.elems perPage)) ++ " bytes")
