{-# LANGUAGE CPP #-}
{-# LANGUAGE MagicHash #-}
{-# LANGUAGE UnboxedTuples #-}
{-# LANGUAGE BangPatterns #-}
{-# LANGUAGE TupleSections #-}
{-# LANGUAGE ForeignFunctionInterface #-}
-- In a profiled build the walk's own allocation is not given cost centres of its own (a leak
-- hunt's -hc run would see it as a band).
{-# OPTIONS_GHC -fno-prof-auto #-}
-- | Heap snapshots of chosen values, for @halvm-prof snapshot FILE@.
--
-- Shipped by halvm-prof (@halvm-prof snapshot module -o DIR@ writes this file); it needs
-- only @base@ and @ghc-heap@ (@-package ghc-heap@), and builds unchanged with GHC 9.0 to 9.10.
--
-- > import HalvmSnapshot
-- > main = do
-- >   cache <- newIORef Map.empty
-- >   snapshotOnSignal "." [root "cache" cache]     -- kill -USR2 PID writes a snapshot
-- >   ...
-- >   snapshot "now.hsnap" [root "cache" cache]     -- or one at once
--
-- The walk reads closures as they are (GHC.Exts.Heap and the RTS's own primitives) and never
-- evaluates one: a thunk stays a thunk. It visits each closure once. A closure is known by its
-- 'StableName': the RTS keeps a stable name valid while the garbage collector moves the
-- closure, which the walk (it allocates, so collections happen during it) needs; an address
-- ('anyToAddr#') is read only to reach the info pointer, within one primitive sequence that
-- cannot be interrupted by a collection. The stable names' own table is kept by the RTS and
-- scanned at each collection, so a walk of millions of closures runs faster with a larger
-- allocation area (+RTS -A64m).
--
-- The file is written as the walk goes (breadth first, in blocks of at most 4096 closures):
-- docs/snapshot-format.md in halvm-prof describes it.
module HalvmSnapshot
  ( Root
  , root
  , snapshot
  , snapshotOnSignal
  , snapshotOnSignalWith
  , sigUSR1
  , sigUSR2
  ) where

import Control.Concurrent.MVar (newMVar, withMVar)
import Control.Exception (IOException, SomeException, catch, evaluate, onException)
import Control.Monad (when)
import Data.Bits (complement, shiftR, (.&.), (.|.))
import Data.Char (ord)
import Data.Dynamic (toDyn)
import Data.IORef (IORef, atomicModifyIORef', newIORef, readIORef, writeIORef)
import Data.Version (showVersion)
import Data.Word (Word32, Word64, Word8)
import Foreign.C.String (CString, withCString)
import Foreign.C.Types (CInt (..), CTime (..))
import Foreign.Marshal.Alloc (free, mallocBytes, reallocBytes)
import Foreign.Ptr (Ptr, nullPtr, plusPtr)
import Foreign.Storable (peek, poke, pokeByteOff)
import Numeric (readHex)
import GHC.Clock (getMonotonicTimeNSec)
import GHC.Conc (ensureIOManagerIsRunning)
import GHC.Conc.Signal (setHandler)
import GHC.Exts
import GHC.Exts.Heap (Box (..), ClosureType (..), GenClosure (..), StgInfoTable (..), asBox, getClosureData)
import qualified GHC.Exts.Heap.InfoTable as Plain (peekItbl)
import qualified GHC.Exts.Heap.InfoTableProf as Profiled (peekItbl)
import GHC.IO (IO (..))
import GHC.IOArray (IOArray, boundsIOArray, newIOArray, unsafeReadIOArray, unsafeWriteIOArray)
import System.Environment (getProgName, lookupEnv)
import System.IO (Handle, IOMode (..), BufferMode (..), hClose, hPutBuf, hPutStr, hPutStrLn, hSetBuffering, openBinaryFile, stderr)
import System.Info (fullCompilerVersion)
import System.Mem.StableName (StableName, hashStableName, makeStableName)
import System.Posix.Internals (c_getpid)
#if __GLASGOW_HASKELL__ >= 906
import GHC.InfoProv (InfoProv (..), whereFrom)
#elif __GLASGOW_HASKELL__ >= 904
import GHC.Stack.CCS (InfoProv (..), whereFrom)
#elif __GLASGOW_HASKELL__ >= 902
import GHC.Stack.CCS (whereFrom)
#endif

-- | A named value to snapshot, and everything it reaches.
data Root = Root String Box

-- | Name a value to snapshot. The value is not evaluated, now or by the walk.
root :: String -> a -> Root
root name x = Root name (asBox x)

-- | Linux's signal numbers (base has no names for them).
sigUSR1, sigUSR2 :: CInt
sigUSR1 = 10
sigUSR2 = 12

-- | Write a snapshot of the roots (and all they reach) to the file now. The file appears
-- whole or not at all (written under another name, then renamed).
snapshot :: FilePath -> [Root] -> IO ()
snapshot = snapshotNumbered 0

-- | On each SIGUSR2, write a snapshot of the roots into the folder (or into
-- @$HALVM_SNAPSHOT_DIR@ when it is set, as @halvm-prof run@ sets it), named
-- @PROGRAM-PID-N.hsnap@. Returns at once.
snapshotOnSignal :: FilePath -> [Root] -> IO ()
snapshotOnSignal = snapshotOnSignalWith sigUSR2

-- | 'snapshotOnSignal' on another signal (it replaces any handler the signal had).
snapshotOnSignalWith :: CInt -> FilePath -> [Root] -> IO ()
snapshotOnSignalWith sig folder roots = do
  given <- lookupEnv "HALVM_SNAPSHOT_DIR"
  let dir = maybe folder id given
  prog <- getProgName
  pid <- c_getpid
  counter <- newIORef (0 :: Int)
  lock <- newMVar ()
  let taken _ = withMVar lock $ \_ -> do
        n <- atomicModifyIORef' counter (\k -> (k + 1, k + 1))
        let path = dir ++ "/" ++ prog ++ "-" ++ show pid ++ "-" ++ show n ++ ".hsnap"
        snapshotNumbered n path roots
          `catch` \e -> hPutStrLn stderr ("HalvmSnapshot: " ++ show (e :: SomeException))
  ensureIOManagerIsRunning
  _ <- setHandler sig (Just (taken, toDyn ()))
  installed <- stg_sig_install sig stgSigHandler nullPtr
  when (installed == stgSigError) $
    ioError (userError ("HalvmSnapshot: cannot install a handler of signal " ++ show sig))
  -- halvm-prof run learns from this file that the program answers the signal.
  case given of
    Just d -> writeWhole (d ++ "/halvm-snapshot-" ++ show pid ++ ".signal") (show sig ++ "\n")
    Nothing -> return ()

foreign import ccall unsafe "stg_sig_install"
  stg_sig_install :: CInt -> CInt -> Ptr () -> IO CInt

-- The RTS's STG_SIG_HAN (run the Haskell handler) and STG_SIG_ERR (rts/include/rts/Signals.h).
stgSigHandler, stgSigError :: CInt
stgSigHandler = -4
stgSigError = -3

foreign import ccall unsafe "rename" c_rename :: CString -> CString -> IO CInt
foreign import ccall unsafe "unlink" c_unlink :: CString -> IO CInt
foreign import ccall unsafe "time" c_time :: Ptr CTime -> IO CTime

-- | Write a file under a temporary name and rename it into place.
replaceWith :: FilePath -> (Handle -> IO ()) -> IO ()
replaceWith path body = do
  pid <- c_getpid
  let temp = path ++ ".tmp-" ++ show pid
  h <- openBinaryFile temp WriteMode
  let cleanup = hClose h >> withCString temp c_unlink >> return ()
  (body h >> hClose h) `onException` cleanup
  r <- withCString temp $ \t -> withCString path $ \p -> c_rename t p
  when (r /= 0) $ do
    _ <- withCString temp c_unlink
    ioError (userError ("HalvmSnapshot: cannot rename " ++ temp ++ " to " ++ path))

writeWhole :: FilePath -> String -> IO ()
writeWhole path text = replaceWith path (\h -> hPutStr h text)

-- Buffers ------------------------------------------------------------------------------------

-- | A growable byte buffer in C memory: a cell holding its bytes, its length, its capacity.
data Buf = Buf !(Ptr (Ptr Word8)) !(Ptr Int) !(Ptr Int)

newBuf :: Int -> IO Buf
newBuf cap = do
  bytes <- mallocBytes cap
  cell <- mallocBytes 8
  poke cell bytes
  len <- mallocBytes 8
  poke len 0
  capacity <- mallocBytes 8
  poke capacity cap
  return (Buf cell len capacity)

freeBuf :: Buf -> IO ()
freeBuf (Buf cell len cap) = do
  peek cell >>= free
  free cell
  free len
  free cap

bufLength :: Buf -> IO Int
bufLength (Buf _ len _) = peek len

-- | Room for @k@ more bytes: where to write them.
reserve :: Buf -> Int -> IO (Ptr Word8)
reserve (Buf cell lenP capP) k = do
  len <- peek lenP
  cap <- peek capP
  when (len + k > cap) $ do
    let cap' = max (2 * cap) (len + k)
    old <- peek cell
    new <- reallocBytes old cap'
    poke cell new
    poke capP cap'
  poke lenP (len + k)
  bytes <- peek cell
  return (bytes `plusPtr` len)

-- | Hand the buffer's bytes to the file and empty it.
drain :: Handle -> Buf -> IO ()
drain h (Buf cell lenP _) = do
  len <- peek lenP
  when (len > 0) $ do
    bytes <- peek cell
    hPutBuf h bytes len
    poke lenP 0

put8 :: Buf -> Word8 -> IO ()
put8 b w = reserve b 1 >>= \p -> pokeByteOff p 0 w

-- | Little-endian, whatever the machine's order.
put32 :: Buf -> Word32 -> IO ()
put32 b w = do
  p <- reserve b 4
  pokeByteOff p 0 (fromIntegral w :: Word8)
  pokeByteOff p 1 (fromIntegral (w `shiftR` 8) :: Word8)
  pokeByteOff p 2 (fromIntegral (w `shiftR` 16) :: Word8)
  pokeByteOff p 3 (fromIntegral (w `shiftR` 24) :: Word8)

put64 :: Buf -> Word64 -> IO ()
put64 b w = do
  put32 b (fromIntegral w)
  put32 b (fromIntegral (w `shiftR` 32))

putInt :: Buf -> Int -> IO ()
putInt b n = put32 b (fromIntegral (min n 0xffffffff))

-- | A string as UTF-8 after its length in bytes; at most 16,000 characters are kept, so a
-- string is never over 64,000 bytes (readers refuse longer ones).
putString :: Buf -> String -> IO ()
putString b s = do
  let bytes = concatMap utf8 (take 16000 s)
  put32 b (fromIntegral (length bytes))
  mapM_ (put8 b) bytes

utf8 :: Char -> [Word8]
utf8 c
  | n < 0x80 = [fromIntegral n]
  | n < 0x800 = [0xc0 .|. hi 6, cont 0]
  | n < 0x10000 = [0xe0 .|. hi 12, cont 6, cont 0]
  | otherwise = [0xf0 .|. hi 18, cont 12, cont 6, cont 0]
  where
    n = ord c
    hi k = fromIntegral (n `shiftR` k)
    cont k = 0x80 .|. (fromIntegral (n `shiftR` k) .&. 0x3f)

-- The writer -----------------------------------------------------------------------------------

-- | Closures per block, and the pointer bytes after which a block is closed early.
blockClosures, blockPointerBytes :: Int
blockClosures = 4096
blockPointerBytes = 1048576

data Writer = Writer
  { wHandle :: !Handle
  , wOut :: !Buf -- records not yet handed to the file
  , wTriples :: !Buf -- the open block's (type, size, pointer count) of each closure
  , wPointers :: !Buf -- the open block's pointers
  , wCount :: !(IORef Int) -- closures in the open block
  , wClosures :: !(IORef Int) -- closures written
  , wEdges :: !(IORef Int) -- pointers written
  }

flushOut :: Writer -> IO ()
flushOut w = do
  len <- bufLength (wOut w)
  when (len >= 65536) $ drain (wHandle w) (wOut w)

closeBlock :: Writer -> IO ()
closeBlock w = do
  n <- readIORef (wCount w)
  when (n > 0) $ do
    pointerBytes <- bufLength (wPointers w)
    put8 (wOut w) (fromIntegral (ord 'B'))
    putInt (wOut w) n
    putInt (wOut w) (pointerBytes `div` 4)
    drain (wHandle w) (wOut w)
    drain (wHandle w) (wTriples w)
    drain (wHandle w) (wPointers w)
    writeIORef (wCount w) 0

-- | A closure's record: its type, its size in words (the top bit set for a static closure) and
-- its pointers.
addClosure :: Writer -> Int -> Int -> Bool -> [Int] -> IO ()
addClosure w typeId size static pointers = do
  put32' (wTriples w) typeId
  put32 (wTriples w) (fromIntegral (min size 0x7fffffff) .|. (if static then 0x80000000 else 0))
  put32' (wTriples w) (length pointers)
  mapM_ (put32' (wPointers w)) pointers
  n <- atomicModifyIORef' (wCount w) (\k -> (k + 1, k + 1))
  atomicModifyIORef' (wClosures w) (\k -> (k + 1, ()))
  atomicModifyIORef' (wEdges w) (\k -> (k + length pointers, ()))
  pointerBytes <- bufLength (wPointers w)
  when (n >= blockClosures || pointerBytes >= blockPointerBytes) (closeBlock w)
  where
    put32' b = putInt b

-- Static closures ---------------------------------------------------------------------------

-- | The process's file-backed mappings (@/proc/self/maps@): a closure there is static (part of
-- the program, never freed), one elsewhere is in the heap. Empty where there is no @/proc@:
-- every closure then counts as heap.
staticRanges :: IO [(Word, Word)]
staticRanges = do
  text <- readFile "/proc/self/maps" `catch` \e -> const (return "") (e :: IOException)
  _ <- evaluate (length text)
  return [r | Just r <- map mapping (lines text)]
  where
    mapping line = case words line of
      (range : _ : _ : _ : inode : _ : _) | inode /= "0" -> case break (== '-') range of
        (lo, '-' : hi) -> (,) <$> hex lo <*> hex hi
        _ -> Nothing
      _ -> Nothing
    hex t = case readHex t of
      [(v, "")] -> Just v
      _ -> Nothing

-- | The closure's address now (it may move at the next collection: only used to tell static
-- from heap, which a move never changes).
addressOf :: Any -> IO Word
addressOf a = IO $ \s -> case anyToAddr# a s of
  (# s1, addr #) -> (# s1, W# (int2Word# (addr2Int# addr)) .&. complement tagMask #)

isStatic :: [(Word, Word)] -> Any -> IO Bool
isStatic ranges a = do
  at <- addressOf a
  return (any (\(lo, hi) -> lo <= at && at < hi) ranges)

-- Closures seen: stable names --------------------------------------------------------------

-- | A chain of (stable name, closure number); a stable name's hash is its index in the RTS's
-- table, unique while the name lives (the table below keeps every name alive), so chains are
-- short; they are there in case a GHC hashes otherwise.
data Seen = Seen !(StableName Any) !Int Seen | Unseen

data SeenTable = SeenTable !(IORef (IOArray Int Seen)) !(IORef Int)

newSeenTable :: IO SeenTable
newSeenTable = do
  arr <- newIOArray (0, 4095) Unseen
  SeenTable <$> newIORef arr <*> newIORef 0

-- | The closure's number, and whether it is new (numbered now).
number :: SeenTable -> StableName Any -> IO (Int, Bool)
number (SeenTable arrRef next) sn = do
  arr0 <- readIORef arrRef
  let h = hashStableName sn
      (_, top) = boundsIOArray arr0
  arr <-
    if h > top
      then do
        let size = max (2 * (top + 1)) (h + 1)
        grown <- newIOArray (0, size - 1) Unseen
        let copy i = when (i <= top) (unsafeReadIOArray arr0 i >>= unsafeWriteIOArray grown i >> copy (i + 1))
        copy 0
        writeIORef arrRef grown
        return grown
      else return arr0
  chain <- unsafeReadIOArray arr h
  case find chain of
    Just k -> return (k, False)
    Nothing -> do
      k <- readIORef next
      writeIORef next (k + 1)
      unsafeWriteIOArray arr h (Seen sn k chain)
      return (k, True)
  where
    find Unseen = Nothing
    find (Seen s k rest) = if s == sn then Just k else find rest

-- Info tables ----------------------------------------------------------------------------------

-- | How the walk takes a closure's pointers, by its closure type.
data Walk = Fields | Array | SmallArray | MVarValue | TVarValue | Indirection | Blackhole | Leaf
  deriving (Eq)

data Kind = Kind !Int !Walk !ClosureType

-- | Info tables met, by info pointer: the type number written for each; how far an info
-- pointer lies after its table's start, and how to read a table (a profiled build's tables
-- have two fields more).
data Kinds = Kinds !(IOArray Int [(Word, Kind)]) !(IORef Int) !Word (Ptr StgInfoTable -> IO StgInfoTable)

kindBuckets :: Int
kindBuckets = 16384

newKinds :: IO Kinds
newKinds = do
  arr <- newIOArray (0, kindBuckets - 1) []
  count <- newIORef 0
  offset <- tablesOffset
  let peek' = if headerWords > 1 then Profiled.peekItbl else Plain.peekItbl
  return (Kinds arr count offset peek')

walkOf :: ClosureType -> Walk
walkOf t = case t of
  IND -> Indirection
  IND_STATIC -> Indirection
  BLACKHOLE -> Blackhole
  MUT_ARR_PTRS_CLEAN -> Array
  MUT_ARR_PTRS_DIRTY -> Array
  MUT_ARR_PTRS_FROZEN_CLEAN -> Array
  MUT_ARR_PTRS_FROZEN_DIRTY -> Array
  SMALL_MUT_ARR_PTRS_CLEAN -> SmallArray
  SMALL_MUT_ARR_PTRS_DIRTY -> SmallArray
  SMALL_MUT_ARR_PTRS_FROZEN_CLEAN -> SmallArray
  SMALL_MUT_ARR_PTRS_FROZEN_DIRTY -> SmallArray
  MVAR_CLEAN -> MVarValue
  MVAR_DIRTY -> MVarValue
  TVAR -> TVarValue
  MUT_VAR_CLEAN -> Fields
  MUT_VAR_DIRTY -> Fields
  THUNK_SELECTOR -> Fields
  PAP -> Fields
  AP -> Fields
  AP_STACK -> Fields -- GHC gives its function only, not the stack it saved
  BCO -> Fields
  _
    | isConstr t || isFun t || isThunk t -> Fields
    | otherwise -> Leaf -- ARR_WORDS, TSO, STACK, WEAK, BLOCKING_QUEUE, ...: not followed

isConstr, isFun, isThunk :: ClosureType -> Bool
isConstr t = t `elem` [CONSTR, CONSTR_1_0, CONSTR_0_1, CONSTR_2_0, CONSTR_1_1, CONSTR_0_2, CONSTR_NOCAF]
isFun t = t `elem` [FUN, FUN_1_0, FUN_0_1, FUN_2_0, FUN_1_1, FUN_0_2, FUN_STATIC]
isThunk t = t `elem` [THUNK, THUNK_1_0, THUNK_0_1, THUNK_2_0, THUNK_1_1, THUNK_0_2, THUNK_STATIC]

-- | The closure's info pointer, read at its address: no collection can happen between taking
-- the address and reading it (one primitive sequence, nothing allocated), so the address is
-- never used after the closure could have moved.
infoPointer :: Any -> IO Word
infoPointer a = IO $ \s -> case anyToAddr# a s of
  (# s1, addr #) ->
    let !(W# mask) = tagMask
        untagged = int2Addr# (word2Int# (and# (int2Word# (addr2Int# addr)) (not# mask)))
     in case readWordOffAddr# untagged 0# s1 of
          (# s2, w #) -> (# s2, W# w #)

tagMask :: Word
tagMask = if (maxBound :: Word) > 0xffffffff then 7 else 3

-- | How far an info pointer lies after the info table's start (the table precedes the code
-- where GHC places tables next to code): told once, from a closure 'unpackClosure#' reads.
tablesOffset :: IO Word
tablesOffset = case asBox () of
  Box u -> do
    raw <- infoPointer u
    case unpackClosure# u of
      (# table, _, _ #) -> return (raw - W# (int2Word# (addr2Int# table)))

-- | The closure's kind: its type number (writing the type record the first time it is met).
kindOf :: Writer -> Kinds -> Any -> IO Kind
kindOf w (Kinds arr count offset peekTable) a = do
  raw <- infoPointer a
  let bucket = fromIntegral ((raw `shiftR` 3) .&. fromIntegral (kindBuckets - 1))
  chain <- unsafeReadIOArray arr bucket
  case lookup raw chain of
    Just k -> return k
    Nothing -> do
      let !(W# table) = raw - offset
      info <- peekTable (Ptr (int2Addr# (word2Int# table)))
      let t = tipe info
      k <- readIORef count
      writeIORef count (k + 1)
      names <-
        if isConstr t
          then do
            c <- getClosureData a
            return $ case c of
              ConstrClosure {pkg = p, modl = m, name = n} -> [p, m, n]
              _ -> ["", "", ""]
          else return ["", "", ""]
      source <- sourceOf a
      let out = wOut w
      put8 out (fromIntegral (ord 'T'))
      putInt out k
      putString out (show t)
      mapM_ (putString out) names
      case source of
        Nothing -> put8 out 0
        Just fields -> put8 out 1 >> mapM_ (putString out) fields
      flushOut w
      let kind = Kind k (walkOf t) t
      unsafeWriteIOArray arr bucket ((raw, kind) : chain)
      return kind

-- | The info table's source (its IPE entry, with -finfo-table-map): name, closure
-- description, type, label, module, file, span.
sourceOf :: Any -> IO (Maybe [String])
#if __GLASGOW_HASKELL__ >= 906
sourceOf a = do
  found <- whereFrom a
  return $ fmap (\p -> [ipName p, description p, ipTyDesc p, ipLabel p, ipMod p, ipSrcFile p, ipSrcSpan p]) found
  where
#if __GLASGOW_HASKELL__ >= 910
    description = show . ipDesc -- a closure type from 9.10 on
#else
    description = ipDesc -- its number, as text
#endif
#elif __GLASGOW_HASKELL__ >= 904
sourceOf a = do
  found <- whereFrom a
  return $ fmap (\p -> let (file, span') = splitLoc (ipLoc p) in [ipName p, ipDesc p, ipTyDesc p, ipLabel p, ipMod p, file, span']) found
#elif __GLASGOW_HASKELL__ >= 902
sourceOf a = do
  found <- whereFrom a
  return $ case found of
    [n, d, t, l, m, loc] -> let (file, span') = splitLoc loc in Just [n, d, t, l, m, file, span']
    _ -> Nothing
#else
sourceOf _ = return Nothing
#endif

#if __GLASGOW_HASKELL__ >= 902 && __GLASGOW_HASKELL__ < 906
-- | "Main.hs:42:17-30" as its file and span.
splitLoc :: String -> (String, String)
splitLoc loc = case break (== ':') loc of
  (file, ':' : rest) -> (file, rest)
  _ -> (loc, "")
#endif

-- The walk ------------------------------------------------------------------------------------

-- | A closure numbered, waiting for its record: the value, and the stable name it was
-- numbered by.
data Pending = Pending Any !(StableName Any)

-- | The pointers 'unpackClosure#' gives (GHC's own list for every closure type it knows).
-- Every list of pointers is built by a strict loop: an element written as a lazy
-- @indexArray# ...@ would be a thunk of the walk's own, walked in place of the pointer.
fieldsOf :: Any -> [Any]
fieldsOf a = case unpackClosure# a of
  (# _, _, ptrs #) -> collect (\i -> indexArray# ptrs i) (sizeofArray# ptrs)

collect :: (Int# -> (# Any #)) -> Int# -> [Any]
collect index n = go (n -# 1#) []
  where
    go i acc
      | isTrue# (i <# 0#) = acc
      | otherwise = case index i of (# p #) -> go (i -# 1#) (p : acc)

-- Functions of an unlifted object (an array, an MVar#, a TVar#), called with the pointer the
-- walk holds as a lifted 'Any'. A lifted value coerced to an unlifted type is evaluated
-- first (GHC enters it: "MVAR object entered"); a function coerced to take 'Any' is called
-- with the pointer as it is. Each is NOINLINE so the coercion stays on the function.

-- | An array's elements, read with the array primitives (GHC's own list would be built on the
-- C stack, too small for a large array).
arrayOf :: Any -> [Any]
arrayOf = unsafeCoerce# arrayElements
{-# NOINLINE arrayOf #-}

arrayElements :: Array# Any -> [Any]
arrayElements arr = collect (\i -> indexArray# arr i) (sizeofArray# arr)
{-# NOINLINE arrayElements #-}

smallArrayOf :: Any -> [Any]
smallArrayOf = unsafeCoerce# smallArrayElements
{-# NOINLINE smallArrayOf #-}

smallArrayElements :: SmallArray# Any -> [Any]
smallArrayElements arr = collect (\i -> indexSmallArray# arr i) (sizeofSmallArray# arr)
{-# NOINLINE smallArrayElements #-}

-- | A full MVar's value (an empty one holds nothing); never blocks.
mvarValue :: Any -> IO [Any]
mvarValue = unsafeCoerce# mvarContents
{-# NOINLINE mvarValue #-}

mvarContents :: MVar# RealWorld Any -> IO [Any]
mvarContents m = IO $ \s -> case tryReadMVar# m s of
  (# s1, 0#, _ #) -> (# s1, [] #)
  (# s1, _, v #) -> (# s1, [v] #)
{-# NOINLINE mvarContents #-}

tvarValue :: Any -> IO [Any]
tvarValue = unsafeCoerce# tvarContents
{-# NOINLINE tvarValue #-}

tvarContents :: TVar# RealWorld Any -> IO [Any]
tvarContents t = IO $ \s -> case readTVarIO# t s of
  (# s1, v #) -> (# s1, [v] #)
{-# NOINLINE tvarContents #-}

-- | A closure of more words than this is never given to 'unpackClosure#' (which copies it and
-- collects its pointers in a C array of its size).
largeClosure :: Int
largeClosure = 4096

-- | The closure a pending entry stands for: an indirection is what it points to, as for the
-- RTS's stable names; a blackhole is followed only where the RTS follows it too (its value is
-- there: the stable names agree), else it is a thunk under evaluation, recorded as it is.
resolve :: Writer -> Kinds -> Any -> StableName Any -> IO (Any, Kind)
resolve w kinds a sn = do
  kind@(Kind _ walk _) <- kindOf w kinds a
  case walk of
    Indirection | (target : _) <- fieldsOf a -> resolve w kinds target sn
    Blackhole | (target : _) <- fieldsOf a -> do
      sn' <- makeStableName target
      if sn' == sn then resolve w kinds target sn else return (a, kind)
    _ -> return (a, kind)

pointersOf :: Writer -> Kinds -> Any -> Walk -> Int -> IO [Any]
pointersOf w kinds a walk size = case walk of
  Fields | size <= largeClosure -> return (fieldsOf a)
  Array -> return (arrayOf a)
  SmallArray -> return (smallArrayOf a)
  MVarValue -> mvarValue a
  TVarValue -> tvarValue a
  Blackhole -> case fieldsOf a of
    -- Under evaluation, a blackhole points to its thread (not followed); else to its value.
    (target : _) -> do
      Kind _ _ t <- kindOf w kinds target
      return (if t `elem` [TSO, BLOCKING_QUEUE] then [] else [target])
    [] -> return []
  _ -> return []

-- | Number a closure a record points to; a closure met for the first time joins the queue.
discover :: SeenTable -> Any -> IO (Int, Maybe Pending)
discover seen a = do
  sn <- makeStableName a
  (k, new) <- number seen sn
  return (k, if new then Just (Pending a sn) else Nothing)

walkAll :: Writer -> Kinds -> SeenTable -> [(Word, Word)] -> [Pending] -> IO ()
walkAll w kinds seen ranges = go []
  where
    go [] [] = return ()
    go back [] = go [] (reverse back)
    go back (Pending a sn : rest) = do
      (c, Kind k walk _) <- resolve w kinds a sn
      let size = I# (closureSize# c)
      targets <- pointersOf w kinds c walk size
      found <- mapM (discover seen) targets
      static <- isStatic ranges c
      addClosure w k size static (map fst found)
      go (foldl (\acc (_, p) -> maybe acc (: acc) p) back found) rest

snapshotNumbered :: Int -> FilePath -> [Root] -> IO ()
snapshotNumbered n path roots = replaceWith path $ \h -> do
  hSetBuffering h NoBuffering
  out <- newBuf 131072
  triples <- newBuf (12 * blockClosures)
  pointers <- newBuf 65536
  w <- Writer h out triples pointers <$> newIORef 0 <*> newIORef 0 <*> newIORef 0
  let release = mapM_ freeBuf [out, triples, pointers]
  (writeSnapshot w n roots >> release) `onException` release

writeSnapshot :: Writer -> Int -> [Root] -> IO ()
writeSnapshot w n roots = do
  start <- getMonotonicTimeNSec
  let out = wOut w
  mapM_ (put8 out . fromIntegral . ord) "HVSNAP\r\n"
  put32 out 1 -- the format's version
  prog <- getProgName
  pid <- c_getpid
  CTime now <- c_time nullPtr
  put8 out (fromIntegral (ord 'I'))
  putString out prog
  putString out (showVersion fullCompilerVersion)
  put8 out (if tagMask == 7 then 8 else 4)
  put8 out (fromIntegral headerWords)
  putInt out (fromIntegral pid)
  putInt out n
  put64 out (fromIntegral now)
  kinds <- newKinds
  seen <- newSeenTable
  ranges <- staticRanges
  queue <- mapM (rootRecord seen) roots
  flushOut w
  walkAll w kinds seen ranges [p | Just p <- queue]
  closeBlock w
  end <- getMonotonicTimeNSec
  closures <- readIORef (wClosures w)
  edges <- readIORef (wEdges w)
  put8 out (fromIntegral (ord 'E'))
  put64 out (fromIntegral closures)
  put64 out (fromIntegral edges)
  put64 out (end - start)
  drain (wHandle w) out
  where
    rootRecord seen (Root name (Box a)) = do
      (k, pending) <- discover seen a
      put8 (wOut w) (fromIntegral (ord 'R'))
      putString (wOut w) name
      putInt (wOut w) k
      return pending

-- | Words in a closure's header: 1, or 3 in a profiled build (cost-centre stack, era).
headerWords :: Int
headerWords = case asBox (Just ()) of Box a -> I# (closureSize# a) - 1
