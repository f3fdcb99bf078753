"""Readers and writers of GHC's profile formats: .hp, .prof (text and JSON), eventlog."""
