module Main (main) where

import System.Environment (getArgs)

-- Meter readings from a day of samples; a negative one means the meter failed.
readings :: Int -> [Int]
readings n = [ (i * 7919) `mod` 1000 | i <- [1 .. n] ]

-- The day's consumption, or the first failed reading.
consumption :: [Int] -> Either String Int
consumption = go 0
  where
    go total [] = Right total
    go total (r : rs)
      | r < 0 = Left ("meter failed with reading " ++ show r)
      | otherwise = go (total + r) rs

main :: IO ()
main = do
  args <- getArgs
  let n = case args of
        (a : _) -> read a
        [] -> 1000000
  case consumption (readings n) of
    Left err -> putStrLn err
    Right total -> putStrLn ("consumption: " ++ show total)
