//! The sysbench-compatible OLTP engine on mysql_async: prepare, run, cleanup for every workload.
