module Main (main) where

import qualified Data.ByteString as B
import qualified Data.ByteString.Char8 as C
import Data.List (foldl')
import qualified Data.Set as Set
import System.Environment (getArgs)

-- A 64 KiB block as the upload service receives it: a 16-byte session token, then the body.
receive :: Int -> B.ByteString
receive i = B.append token (B.replicate (65536 - 16) (fromIntegral (i `mod` 251)))
  where
    token = C.pack (take 16 (show (i * 7919 `mod` 1000003) ++ "-session-token-padding"))

-- The session token at the head of a block, copied: a slice would keep the whole block alive.
sessionOf :: B.ByteString -> B.ByteString
sessionOf = B.copy . B.take 16

data Uploads = Uploads
  { sessions :: !(Set.Set B.ByteString)
  , bodyBytes :: !Int
  , checksum :: !Int
  }

-- Take one block: remember its session, count and check its body.
accept :: Uploads -> B.ByteString -> Uploads
accept u block =
  Uploads
    (Set.insert (sessionOf block) (sessions u))
    (bodyBytes u + B.length body)
    (B.foldl' (\acc w -> (acc * 31 + fromIntegral w) `mod` 1000003) (checksum u) body)
  where
    body = B.drop 16 block

main :: IO ()
main = do
  args <- getArgs
  let n = case args of
        (a : _) -> read a
        [] -> 600
      u = foldl' accept (Uploads Set.empty 0 0) (map receive [1 .. n])
  putStrLn ("sessions seen: " ++ show (Set.size (sessions u)))
  putStrLn ("body bytes: " ++ show (bodyBytes u) ++ ", checksum " ++ show (checksum u))
