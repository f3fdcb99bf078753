module Main (main) where

import Data.List (foldl')
import System.Environment (getArgs)

-- A print job, and how many jobs were waiting ahead of it when it was submitted (shown to
-- the user only when the job turns out slow).
data Job = Job
  { jobId :: !Int
  , jobPages :: !Int
  , jobsAhead :: !Int
  }

-- A first-in first-out queue: the front, and the back in reverse.
data Queue = Queue [Job] [Job]

size :: Queue -> Int
size (Queue front back) = length front + length back

submit :: Int -> Int -> Queue -> Queue
submit ident pages q@(Queue front back) = Queue front (Job ident pages (size q) : back)

next :: Queue -> Maybe (Job, Queue)
next (Queue [] []) = Nothing
next (Queue [] back) = next (Queue (reverse back) [])
next (Queue (j : front) back) = Just (j, Queue front back)

data Printer = Printer
  { queue :: !Queue
  , printed :: !Int
  , ink :: !Int
  , slowReport :: ![String]
  }

-- One tick: a job arrives, and the printer prints the oldest one.
tick :: Printer -> Int -> Printer
tick p t = case next (submit t ((t * 7919) `mod` 60) (queue p)) of
  Nothing -> p
  Just (job, rest) ->
    let report
          | jobPages job == 59 && jobId job `mod` 97 == 0 =
              ("job " ++ show (jobId job) ++ " waited behind " ++ show (jobsAhead job)) : slowReport p
          | otherwise = slowReport p
     in p { queue = rest, printed = printed p + jobPages job, ink = render (ink p) (jobPages job), slowReport = report }

-- Rasterise a job's pages; the ink used so far.
render :: Int -> Int -> Int
render used pages = foldl' (\acc k -> (acc * 33 + k) `mod` 65521) used [1 .. 3 * pages]

-- The printer starts the day with a backlog of 30 jobs.
run :: Int -> Printer
run n = loop (Printer backlog 0 0 []) 1
  where
    backlog = foldr (\k q -> submit (-k) 1 q) (Queue [] []) [1 .. 30]
    loop p t
      | t > n = p
      | otherwise = let p' = tick p t in p' `seq` loop p' (t + 1)

main :: IO ()
main = do
  args <- getArgs
  let n = case args of
        (a : _) -> read a
        [] -> 400000
      p = run n
  putStrLn ("pages printed: " ++ show (printed p) ++ ", ink " ++ show (ink p) ++ ", jobs left: " ++ show (size (queue p)))
  mapM_ putStrLn (reverse (slowReport p))
