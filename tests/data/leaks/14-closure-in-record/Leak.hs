module Main (main) where

import Data.List (foldl')
import qualified Data.Set as Set
import System.Environment (getArgs)

-- A firewall rule from the configuration file.
data Rule = Rule
  { ruleSource :: !Int
  , rulePort :: !Int
  , ruleAllow :: !Bool
  }

-- What the packet loop needs: a test, and a line for the status page.
data Filter = Filter
  { admits :: Int -> Bool
  , describe :: String
  }

compile :: [Rule] -> Filter
compile rules = Filter
  { admits = (`Set.member` allowed)
  , describe = "firewall: " ++ show (length rules) ++ " rules, " ++ show (Set.size allowed) ++ " sources allowed"
  }
  where
    allowed = Set.fromList [ ruleSource r | r <- rules, ruleAllow r ]

loadRules :: Int -> [Rule]
loadRules n = [ Rule ((i * 7919) `mod` 5000) (i `mod` 65536) (i `mod` 3 == 0) | i <- [1 .. n] ]

-- Packets from the network: their source addresses.
packets :: Int -> [Int]
packets n = [ (i * 104729) `mod` 8000 | i <- [1 .. n] ]

main :: IO ()
main = do
  args <- getArgs
  let n = case args of
        (a : _) -> read a
        [] -> 500000
      firewall = compile (loadRules n)
      admitted = foldl' (\count p -> if admits firewall p then count + 1 else count) (0 :: Int) (packets n)
  putStrLn ("packets admitted: " ++ show admitted)
  putStrLn (describe firewall)
