-- A real library at work: Cabal's own .cabal parser (with parsec, containers and bytestring
-- under it), run N times over a package description, so the reports hold hundreds of cost
-- centres from library code. Usage: cabal-parse N FILE.cabal
import qualified Data.ByteString.Char8 as B
import Distribution.PackageDescription.Parsec (parseGenericPackageDescription, runParseResult)
import System.Environment (getArgs)

main :: IO ()
main = do
  [n, path] <- getArgs
  src <- B.readFile path
  let parsed i = case snd (runParseResult (parseGenericPackageDescription (variant i))) of
        Right gpd -> length (show gpd)
        Left _ -> 0
      -- A comment that changes each time keeps GHC from sharing one parse.
      variant i = B.append src (B.pack ("\n-- run " ++ show (i :: Int) ++ "\n"))
  print (sum (map parsed [1 .. read n]))
