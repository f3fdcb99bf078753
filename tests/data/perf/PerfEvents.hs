-- Reads an eventlog with ghc-events (Debian's libghc-ghc-events-dev) and prints, in the order
-- the library hands them out: every perf event (name or tracepoint, with its capability), and
-- the number of events of every other kind. tests/unit/test_eventlog_merge.py reads the output.
import GHC.RTS.Events
import System.Environment (getArgs)

main :: IO ()
main = do
  [f] <- getArgs
  r <- readEventLogFromFile f
  case r of
    Left e -> error e
    Right (EventLog _ (Data es)) -> do
      mapM_ perf es
      putStrLn ("events " ++ show (length es))
  where
    perf e = case evSpec e of
      PerfName n s -> putStrLn ("name " ++ show n ++ " " ++ show s)
      PerfTracepoint n t ->
        putStrLn ("sample " ++ show (evTime e) ++ " " ++ maybe "-1" show (evCap e) ++ " " ++ show n ++ " " ++ show (kernelThreadId t))
      _ -> return ()
