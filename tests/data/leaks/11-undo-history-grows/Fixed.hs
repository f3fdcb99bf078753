module Main (main) where

import Data.Foldable (toList)
import Data.List (foldl')
import qualified Data.Sequence as Seq
import System.Environment (getArgs)

-- One edit to the document: where, what was there, and what replaced it.
data Edit = Edit
  { editAt :: !Int
  , editOld :: !Int
  , editNew :: !Int
  }

data Editor = Editor
  { document :: !Int
  , edits :: !Int
  , undo :: !(Seq.Seq Edit)
  }

-- How many edits can be undone: the oldest are forgotten beyond this.
undoLimit :: Int
undoLimit = 100

-- Apply an edit; remember it so that it can be undone.
apply :: Editor -> Int -> Editor
apply ed i =
  let at = (i * 7919) `mod` 4096
      new = (i * 31) `mod` 251
      old = (document ed + at) `mod` 251
      edit = Edit at old new
      -- The checksum of the edited line, taken again.
      line = foldl' (\acc k -> (acc * 31 + k + new) `mod` 1000003) (document ed) [at .. at + 40]
   in edit `seq` ed { document = (line * 17 + new - old) `mod` 1000003
                    , edits = edits ed + 1
                    , undo = Seq.take undoLimit (edit Seq.<| undo ed) }

-- The undo menu shows the last few edits.
undoMenu :: Editor -> [String]
undoMenu ed = [ "at " ++ show (editAt e) ++ ": " ++ show (editOld e) ++ " -> " ++ show (editNew e) | e <- take 3 (toList (undo ed)) ]

main :: IO ()
main = do
  args <- getArgs
  let n = case args of
        (a : _) -> read a
        [] -> 800000
      ed = foldl' apply (Editor 0 0 Seq.empty) [1 .. n]
  putStrLn ("document checksum: " ++ show (document ed) ++ " after " ++ show (edits ed) ++ " edits")
  mapM_ putStrLn (undoMenu ed)
