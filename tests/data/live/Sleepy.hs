-- Sleep-bound: twenty sleeps of a tenth of a second and next to no work, so watching it
-- should cost it no wall time (run --baseline's test).
module Main (main) where

import Control.Concurrent (threadDelay)
import Control.Monad (forM_)

main :: IO ()
main = forM_ [1 .. 20 :: Int] $ \_ -> threadDelay 100000
