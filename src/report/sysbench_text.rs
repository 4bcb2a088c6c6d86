//! Renders result documents as sysbench-compatible report text.
