//! TPC-C workload, tpcc-mysql compatible output and TpmC (filled by a later issue).
