-- A numeric loop for `perf annotate` (tests/annotate_recordings.py): integer division and
-- remainder in a tight loop, so the hot instructions are GHC's own code and its blocks; and
-- sums of Integers past 64 bits, so GHC's integerAdd (library code without DWARF) runs too.
module Main (main) where

import System.Environment (getArgs)

-- Digit sums of every number below the limit, weighted by a second loop's remainders.
digitSum :: Int -> Int
digitSum n = go n 0
  where
    go 0 acc = acc
    go m acc = go (m `quot` 10) (acc + m `rem` 10)

mix :: Int -> Int -> Int
mix limit seed = loop 1 seed
  where
    loop k acc
      | k > limit = acc
      | otherwise =
          let d = digitSum (k * 7 + acc `rem` 13)
              acc' = (acc * 31 + d) `rem` 1000003
           in loop (k + 1) (if even d then acc' else acc' + k `quot` 3)

-- Integers past 64 bits summed: each step is GHC's integerAdd of a big and a small Integer.
bigSum :: Int -> Integer
bigSum n = go 1 (2 ^ (70 :: Int))
  where
    go :: Int -> Integer -> Integer
    go k acc
      | k > n = acc
      | otherwise = go (k + 1) (acc + fromIntegral k)

main :: IO ()
main = do
  args <- getArgs
  let scale = case args of
        (a : _) -> read a
        _ -> 1 :: Int
  print (mix (10000000 * scale) 7)
  print (bigSum (3000000 * scale))
