//! sysbench-compatible fileio engine: prepare, run, cleanup for every test mode.
