-- The structures the snapshot tests count by hand (tests/unit/test_snapshot_programs.py):
-- each root's retained size in words follows from the constructors below.
--
--   structures now OUT             snapshot OUT once the structures are built
--   structures signal DIR          snapshot into DIR on each SIGUSR2; DIR/ready once the
--                                  handler is in, exit when the test creates DIR/release
--   structures grow OUT1 OUT2 W    snapshot, grow W (cache, lazy or events), snapshot again
module Main (main) where

import Control.Concurrent (threadDelay)
import Control.Concurrent.MVar (MVar, newMVar)
import Control.Exception (evaluate)
import Control.Monad (forM, forM_, replicateM_, unless)
import Data.IORef
import Data.List (foldl')
import qualified Data.Map.Lazy as M
import GHC.Conc (TVar, newTVarIO)
import HalvmSnapshot
import System.Directory (doesFileExist)
import System.Environment (getArgs)
import System.Mem (performMajorGC)

-- Words per closure (64-bit, not profiled): a header word, then the fields.
data Event = Event {-# UNPACK #-} !Int {-# UNPACK #-} !Int -- 3
data Job = Job {-# UNPACK #-} !Int (Int -> Int) -- 3, and its function: 2
data Queue = Queue [Job] [Job] -- 3
data Node = Node {-# UNPACK #-} !Int Node -- 3
data Payload = Payload {-# UNPACK #-} !Int {-# UNPACK #-} !Int {-# UNPACK #-} !Int -- 4
data Pair = Pair Payload Payload -- 3
data Holder = LeftHolder [Payload] | RightHolder [Payload] -- 2 (two constructors: GHC would
-- make one closure of two equal ones)

data Structures = Structures
  { cache :: IORef (M.Map Int String)
  , events :: IORef [Event]
  , queue :: MVar Queue
  , ring :: Node
  , left :: Holder
  , right :: Holder
  , pair :: Pair
  , tvar :: TVar Payload
  , boom :: Int
  , counter :: IORef Int
  }

lazyValue :: Int -> String
lazyValue k = replicate k 'x'
{-# NOINLINE lazyValue #-}

mkJob :: Int -> Job
mkJob n = Job n (\x -> x + n)
{-# NOINLINE mkJob #-}

-- | A cache of lazy values: Map.Bin 6 + key 2 + value thunk 3 each.
fillCache :: M.Map Int String -> [Int] -> M.Map Int String
fillCache = foldl' (\m k -> M.insert k (lazyValue k) m)

build :: Int -> IO Structures
build argc = do
  -- Values from the command line's length: built at run time, not static data of the program
  -- (GHC makes a constant's box, and a thunk of constants, part of the program).
  c <- newIORef $! fillCache M.empty [1000 + argc .. 1099 + argc]
  e <- newIORef []
  forM_ [1 .. 200] $ \i -> do
    ev <- evaluate (Event (i * 1000) i)
    modifyIORef' e (ev :)
  jobs <- forM [2000 .. 2049] (evaluate . mkJob)
  let (front, back) = splitAt 25 jobs
  _ <- evaluate (length front + length back)
  q <- newMVar $! Queue front back
  -- A knot: GHC ties it with thunks, evaluated here (the collection then drops them).
  let a = Node (3001 + argc) b
      b = Node (3002 + argc) d
      d = Node (3003 + argc) a
      around :: Int -> Node -> IO ()
      around 0 _ = return ()
      around k (Node _ next) = evaluate next >>= around (k - 1)
  evaluate a >>= around 3
  shared <- forM [4000 .. 4009] (\i -> evaluate (Payload i argc i))
  p <- evaluate (Payload 5000 argc 5000)
  t <- newTVarIO $! Payload 6000 argc 6000
  -- A thunk that throws when forced: the walk must leave it alone.
  let thunk = if argc > 1000 then 0 else error ("forced by the walk " ++ show argc)
  n <- newIORef 0
  return (Structures c e q a (LeftHolder shared) (RightHolder shared) (Pair p p) t thunk n)

-- | The roots, taken by a pattern: @root "cache" (cache s)@ would name a selector thunk that
-- holds the whole record.
roots :: Structures -> [Root]
roots (Structures c e q r l r' p t b n) =
  [ root "cache" c
  , root "events" e
  , root "queue" q
  , root "ring" r
  , root "left" l
  , root "right" r'
  , root "pair" p
  , root "tvar" t
  , root "boom" b
  , root "counter" n
  ]

grow :: Structures -> String -> IO ()
grow s "cache" = modifyIORef' (cache s) (\m -> let k = M.size m in fillCache m [5000 + k .. 5499 + k])
grow s "lazy" = replicateM_ 1000 (modifyIORef (counter s) (+ 1))
grow s "events" = forM_ [1 .. 300] $ \i -> do
  ev <- evaluate (Event i i)
  modifyIORef' (events s) (ev :)
grow _ what = error ("nothing called " ++ what ++ " grows")

waitFor :: FilePath -> IO ()
waitFor path = do
  there <- doesFileExist path
  unless there (threadDelay 10000 >> waitFor path)

main :: IO ()
main = do
  args <- getArgs
  s <- build (length args)
  performMajorGC
  case args of
    ["now", out] -> snapshot out (roots s)
    ["signal", dir] -> do
      snapshotOnSignal dir (roots s)
      writeFile (dir ++ "/ready") ""
      waitFor (dir ++ "/release")
    ["grow", out1, out2, what] -> do
      snapshot out1 (roots s)
      grow s what
      performMajorGC
      snapshot out2 (roots s)
    _ -> error "usage: structures now OUT | signal DIR | grow OUT1 OUT2 WHAT"
  putStrLn "done"
