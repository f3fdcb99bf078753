module Main (main) where

import Control.Exception (evaluate)
import Data.List (foldl', isInfixOf)
import System.Environment (getArgs)

-- The server's log as one lazy String, as readFile or getContents would give it: a header
-- line, then one line per request.
serverLog :: Int -> String
serverLog n = unlines ("access log of gateway-7, rotated at 00:00" : map entry [1 .. n])
  where
    entry i =
      "req=" ++ show i ++ " user=" ++ show ((i * 7919) `mod` 5000)
        ++ (if i `mod` 17 == 0 then " status=500 ERROR upstream timeout" else " status=200 ok")
        ++ " bytes=" ++ show (300 + (i * 31) `mod` 9000)

data Counts = Counts !Int !Int

-- Requests and errors in the log's body.
count :: [String] -> Counts
count = foldl' step (Counts 0 0)
  where
    step (Counts requests errors) line =
      Counts (requests + 1) (if "ERROR" `isInfixOf` line then errors + 1 else errors)

main :: IO ()
main = do
  args <- getArgs
  let n = case args of
        (a : _) -> read a
        [] -> 35000
      text = serverLog n
      header = takeWhile (/= '\n') text
  -- Take the header out before the body is read: an unevaluated header points at the start
  -- of the text, and would keep all of it.
  _ <- evaluate (length header)
  let Counts requests errors = count (drop 1 (lines text))
  putStrLn ("requests: " ++ show requests ++ ", errors: " ++ show errors)
  putStrLn ("log: " ++ header)
