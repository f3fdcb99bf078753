"""HaLVM profiling disks: the status-sector layout, image reading, a runtime-faithful writer,
and recovery of profiles from crashed runs (the format: docs/disk-format.md)."""
