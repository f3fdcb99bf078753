-- Word counts through a user-defined operator and SCCs whose names hold a space and <>.
module Main (main) where

import qualified Data.Map.Strict as M
import Data.List (foldl')
import System.Environment (getArgs)

infixl 6 <+>
(<+>) :: M.Map String Int -> M.Map String Int -> M.Map String Int
a <+> b = M.unionWith (+) a b

count :: [String] -> M.Map String Int
count = foldl' (\m w -> m <+> M.singleton w 1) M.empty

main :: IO ()
main = do
  args <- getArgs
  let n = case args of (a:_) -> read a; _ -> 20000
      ws = [ show (i `mod` 97) ++ "-é" | i <- [1 .. n :: Int] ]
      m = {-# SCC "word_count" #-} count ws
  print (M.size m)
  print ({-# SCC "tot'al" #-} sum (M.elems m))
