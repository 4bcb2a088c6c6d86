//! Disk discovery from sysfs and the eligibility rules for benchmark targets.
