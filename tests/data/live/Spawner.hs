-- Starts a process with spawnCommand and leaves it running: run and hunt must end it with the
-- program (issue 43). The command is its first argument; the rest of its work is a small
-- growing list, so it writes a few heap censuses.
module Main (main) where

import System.Environment (getArgs)
import System.Process (spawnCommand)

main :: IO ()
main = do
  args <- getArgs
  case args of
    (command : _) -> () <$ spawnCommand command
    [] -> pure ()
  let xs = [1 .. 300000 :: Int]
  print (sum xs + length (show xs))
