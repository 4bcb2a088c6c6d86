//! Configuration: TOML files and command-line arguments turned into plain engine configs, with validation.
