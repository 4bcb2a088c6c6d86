//! A profile's `[oltp.regimes]`: the same OLTP workloads on the same data set in both of
//! MySQL's regimes (seed 004) — once with a buffer pool the data set fits in (CPU-bound: the
//! disk barely shows), once with one far smaller than the data set (I/O-bound: the disk
//! shows) — the server restarted with each buffer pool and the page cache dropped in between.
//!
//! Resolved once, like the rest of the profile: sizes parsed, and each buffer pool checked
//! against the data set the rows make (estimated here; the run measures the table files).

use crate::units::human_size;
use serde::Deserialize;

/// `[oltp.regimes]` as written.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegimesProfile {
    /// Buffer pool of the CPU-bound pass: `auto` (the data set measured after prepare × 1.25,
    /// rounded up to 128 MiB, at most 3/4 of RAM) or a size that holds the whole data set.
    pub cpu_bound: String,
    /// Buffer pool of the I/O-bound pass: a size at most half the data set.
    pub io_bound: String,
}

/// The CPU-bound pass's buffer pool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CpuBoundPool {
    /// Sized at run time from the data set measured after prepare ([`auto_pool_bytes`]).
    Auto,
    Bytes(u64),
}

/// Both regimes' buffer pools, resolved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Regimes {
    pub cpu_bound: CpuBoundPool,
    pub io_bound: u64,
}

/// The smallest buffer pool MariaDB accepts with 16 KiB pages (MySQL's is 5 MiB).
const MIN_POOL: u64 = 6 << 20;
/// `auto`: the data set and a quarter more (indexes grow, the undo log and the adaptive hash
/// index live in the pool too), in InnoDB's 128 MiB chunks.
const AUTO_HEADROOM: f64 = 1.25;
const CHUNK: u64 = 128 << 20;

/// The `auto` buffer pool for a measured data set of `data_bytes`, or why this machine cannot
/// hold it (more than 3/4 of `ram_bytes`).
pub fn auto_pool_bytes(data_bytes: u64, ram_bytes: u64) -> Result<u64, String> {
    let want = ((data_bytes as f64 * AUTO_HEADROOM) as u64).div_ceil(CHUNK) * CHUNK;
    let most = ram_bytes / 4 * 3;
    if want > most {
        return Err(format!(
            "a buffer pool that holds the {} data set ({}) is more than 3/4 of this machine's {} of RAM: use fewer OLTP rows (tables × table_size) to see the CPU-bound regime here",
            human_size(data_bytes),
            human_size(want),
            human_size(ram_bytes)
        ));
    }
    Ok(want)
}

/// Resolves `[oltp.regimes]` for a data set of `tables` × `table_size` rows. Errors name the
/// key (relative to `[oltp]`).
pub fn resolve(
    r: &RegimesProfile,
    tables: u32,
    table_size: u32,
) -> Result<Regimes, (&'static str, String)> {
    let data = crate::oltp::estimated_data_bytes(tables, table_size);
    let rows = format!(
        "≈ {} for {tables} tables × {table_size} rows",
        human_size(data)
    );
    let io_bound = crate::units::parse_size(&r.io_bound).map_err(|e| ("regimes.io_bound", e))?;
    if io_bound < MIN_POOL {
        return Err((
            "regimes.io_bound",
            format!(
                "{} is below the server's minimum buffer pool of 6 MiB",
                human_size(io_bound)
            ),
        ));
    }
    if io_bound > data / 2 {
        let fix = if data / 2 >= MIN_POOL {
            format!(
                "use at most half of it ({}), or more rows",
                human_size(data / 2)
            )
        } else {
            format!(
                "use more rows: the smallest buffer pool (6 MiB) needs a data set of 12 MiB, ≈ {} rows in all",
                2 * MIN_POOL / crate::oltp::BYTES_PER_ROW
            )
        };
        return Err((
            "regimes.io_bound",
            format!(
                "{} is not well below the OLTP data set ({rows}): {fix}",
                human_size(io_bound)
            ),
        ));
    }
    let cpu_bound = match r.cpu_bound.trim() {
        "auto" => CpuBoundPool::Auto,
        text => {
            let b = crate::units::parse_size(text).map_err(|e| {
                (
                    "regimes.cpu_bound",
                    format!("{e}; or \"auto\" to size it from the data set"),
                )
            })?;
            if (b as f64) < data as f64 * 1.1 {
                return Err((
                    "regimes.cpu_bound",
                    format!(
                        "{} does not hold the OLTP data set ({rows}) with room to spare: use at least {}, or \"auto\"",
                        human_size(b),
                        human_size((data as f64 * 1.1) as u64)
                    ),
                ));
            }
            CpuBoundPool::Bytes(b)
        }
    };
    Ok(Regimes {
        cpu_bound,
        io_bound,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn regimes(cpu: &str, io: &str) -> RegimesProfile {
        RegimesProfile {
            cpu_bound: cpu.into(),
            io_bound: io.into(),
        }
    }

    #[test]
    fn both_pools_are_checked_against_the_data_set() {
        // 8 × 1M rows ≈ 1.9 GiB
        let r = resolve(&regimes("auto", "256M"), 8, 1_000_000).unwrap();
        assert_eq!(r.cpu_bound, CpuBoundPool::Auto);
        assert_eq!(r.io_bound, 256 << 20);
        let r = resolve(&regimes("3G", "256M"), 8, 1_000_000).unwrap();
        assert_eq!(r.cpu_bound, CpuBoundPool::Bytes(3 << 30));
        let (k, e) = resolve(&regimes("1G", "256M"), 8, 1_000_000).unwrap_err();
        assert_eq!(k, "regimes.cpu_bound");
        assert!(
            e.contains("does not hold the OLTP data set (≈ 1.9 GiB for 8 tables × 1000000 rows)"),
            "{e}"
        );
        let (k, e) = resolve(&regimes("auto", "64M"), 4, 10_000).unwrap_err();
        assert_eq!(k, "regimes.io_bound");
        assert!(
            e.contains("not well below the OLTP data set (≈ 9.5 MiB"),
            "{e}"
        );
        let (_, e) = resolve(&regimes("auto", "8M"), 2, 1000).unwrap_err();
        assert!(e.ends_with("use more rows: the smallest buffer pool (6 MiB) needs a data set of 12 MiB, ≈ 50331 rows in all"), "{e}");
        let (k, e) = resolve(&regimes("auto", "1M"), 8, 1_000_000).unwrap_err();
        assert_eq!(k, "regimes.io_bound");
        assert!(e.contains("minimum buffer pool"), "{e}");
        let (k, e) = resolve(&regimes("lots", "256M"), 8, 1_000_000).unwrap_err();
        assert_eq!(k, "regimes.cpu_bound");
        assert!(e.contains("\"auto\""), "{e}");
    }

    #[test]
    fn auto_holds_the_data_set_when_the_machine_can() {
        let gib = 1u64 << 30;
        // 1 GiB × 1.25 = 10 chunks of 128 MiB; a MiB more takes another chunk
        assert_eq!(auto_pool_bytes(gib, 8 * gib), Ok(1280 << 20));
        assert_eq!(auto_pool_bytes(gib + (1 << 20), 8 * gib), Ok(1408 << 20));
        assert_eq!(auto_pool_bytes(10 << 20, 8 * gib), Ok(128 << 20));
        let e = auto_pool_bytes(19 * gib / 10, 2 * gib).unwrap_err();
        assert!(
            e.contains("more than 3/4 of this machine's 2.0 GiB of RAM"),
            "{e}"
        );
    }
}
