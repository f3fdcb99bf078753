import Data.IORef
import qualified Data.Map as Map
import HalvmSnapshot

main :: IO ()
main = do
  cache <- newIORef Map.empty
  snapshotOnSignal "." [root "cache" cache]     -- kill -USR2 PID writes ./main-PID-1.hsnap, ...
  mapM_ (\k -> modifyIORef' cache (Map.insert k (show k))) [1 .. 100000 :: Int]
  snapshot "cache.hsnap" [root "cache" cache]   -- one now
