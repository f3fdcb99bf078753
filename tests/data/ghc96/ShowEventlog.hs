-- `ghc-events show FILE` as done by the ghc-events library this is built with (0.19.0.1 in
-- trixie, which has no ghc-events executable): the CLI's reading and text. readEventLogOrFail, as
-- the CLI uses, makes a malformed event an error; readEventLogFromFile would instead drop every
-- event after it in silence, which would hide exactly the breakage these references are for.
module Main (main) where

import qualified Data.ByteString.Lazy as BL
import GHC.RTS.Events (ppEventLog)
import GHC.RTS.Events.Incremental (readEventLogOrFail)
import System.Environment (getArgs)
import System.Exit (die)

main :: IO ()
main = do
  [file] <- getArgs
  res <- readEventLogOrFail <$> BL.readFile file
  case res of
    Left err -> die ("Failed to parse " ++ file ++ ": " ++ err)
    Right evlog -> putStrLn (ppEventLog evlog)
