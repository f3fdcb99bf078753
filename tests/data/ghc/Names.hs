-- Cost-centre names that break naive readers: a quote and a backslash (GHC 9.0's -pj writes
-- them unescaped), UTF-8 (the text report pads by characters), an operator and a primed name.
module Main (main) where

import qualified Data.Map.Strict as M
import Data.List (foldl')
import System.Environment (getArgs)

infixr 5 <|
(<|) :: Int -> [Int] -> [Int]
x <| xs = x * 3 `mod` 1009 : xs

main :: IO ()
main = do
  args <- getArgs
  let n = case args of (a:_) -> read a; _ -> 100000
      xs = {-# SCC "say\"hi\"" #-} foldr (<|) [] [1 .. n :: Int]
      table = {-# SCC "größe" #-} foldl' (\m x -> M.insertWith (+) (x `mod` 257) x m) M.empty xs
      back = {-# SCC "back\\slash" #-} M.foldr (+) 0 table
  print (M.size table)
  print back
  print ({-# SCC "total'" #-} sum (map (`mod` 7) xs))
