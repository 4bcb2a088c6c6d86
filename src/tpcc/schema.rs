//! tpcc-mysql's schema: the nine InnoDB tables of `create_table.sql`, the secondary indexes and
//! foreign keys of `add_fkey_idx.sql` (added after the data), and spindle's one-row marker table
//! `spindle_tpcc` that records what `prepare` loaded and whether a run has changed the data since
//! (consistency condition 3.3.2.11 holds only right after the load).

use super::error::TpccError;
use crate::db::describe_error;
use mysql_async::prelude::Queryable;
use mysql_async::Conn;

/// The nine TPC-C tables, in the order `cleanup` drops them (children before parents).
pub const TABLES: [&str; 9] = [
    "order_line",
    "new_orders",
    "history",
    "orders",
    "customer",
    "district",
    "stock",
    "item",
    "warehouse",
];

/// spindle's marker table (not part of TPC-C; tpcc-mysql ignores it).
pub const MARKER: &str = "spindle_tpcc";

/// CREATE TABLE statements, column for column tpcc-mysql's `create_table.sql`.
pub const CREATE: [(&str, &str); 9] = [
    (
        "warehouse",
        "CREATE TABLE warehouse (w_id smallint not null, w_name varchar(10), \
         w_street_1 varchar(20), w_street_2 varchar(20), w_city varchar(20), w_state char(2), \
         w_zip char(9), w_tax decimal(4,2), w_ytd decimal(12,2), primary key (w_id)) Engine=InnoDB",
    ),
    (
        "district",
        "CREATE TABLE district (d_id tinyint not null, d_w_id smallint not null, \
         d_name varchar(10), d_street_1 varchar(20), d_street_2 varchar(20), d_city varchar(20), \
         d_state char(2), d_zip char(9), d_tax decimal(4,2), d_ytd decimal(12,2), \
         d_next_o_id int, primary key (d_w_id, d_id)) Engine=InnoDB",
    ),
    (
        "customer",
        "CREATE TABLE customer (c_id int not null, c_d_id tinyint not null, \
         c_w_id smallint not null, c_first varchar(16), c_middle char(2), c_last varchar(16), \
         c_street_1 varchar(20), c_street_2 varchar(20), c_city varchar(20), c_state char(2), \
         c_zip char(9), c_phone char(16), c_since datetime, c_credit char(2), \
         c_credit_lim bigint, c_discount decimal(4,2), c_balance decimal(12,2), \
         c_ytd_payment decimal(12,2), c_payment_cnt smallint, c_delivery_cnt smallint, \
         c_data text, PRIMARY KEY(c_w_id, c_d_id, c_id)) Engine=InnoDB",
    ),
    (
        "history",
        "CREATE TABLE history (h_c_id int, h_c_d_id tinyint, h_c_w_id smallint, h_d_id tinyint, \
         h_w_id smallint, h_date datetime, h_amount decimal(6,2), h_data varchar(24)) \
         Engine=InnoDB",
    ),
    (
        "new_orders",
        "CREATE TABLE new_orders (no_o_id int not null, no_d_id tinyint not null, \
         no_w_id smallint not null, PRIMARY KEY(no_w_id, no_d_id, no_o_id)) Engine=InnoDB",
    ),
    (
        "orders",
        "CREATE TABLE orders (o_id int not null, o_d_id tinyint not null, \
         o_w_id smallint not null, o_c_id int, o_entry_d datetime, o_carrier_id tinyint, \
         o_ol_cnt tinyint, o_all_local tinyint, PRIMARY KEY(o_w_id, o_d_id, o_id)) Engine=InnoDB",
    ),
    (
        "order_line",
        "CREATE TABLE order_line (ol_o_id int not null, ol_d_id tinyint not null, \
         ol_w_id smallint not null, ol_number tinyint not null, ol_i_id int, \
         ol_supply_w_id smallint, ol_delivery_d datetime, ol_quantity tinyint, \
         ol_amount decimal(6,2), ol_dist_info char(24), \
         PRIMARY KEY(ol_w_id, ol_d_id, ol_o_id, ol_number)) Engine=InnoDB",
    ),
    (
        "item",
        "CREATE TABLE item (i_id int not null, i_im_id int, i_name varchar(24), \
         i_price decimal(5,2), i_data varchar(50), PRIMARY KEY(i_id)) Engine=InnoDB",
    ),
    (
        "stock",
        "CREATE TABLE stock (s_i_id int not null, s_w_id smallint not null, s_quantity smallint, \
         s_dist_01 char(24), s_dist_02 char(24), s_dist_03 char(24), s_dist_04 char(24), \
         s_dist_05 char(24), s_dist_06 char(24), s_dist_07 char(24), s_dist_08 char(24), \
         s_dist_09 char(24), s_dist_10 char(24), s_ytd decimal(8,0), s_order_cnt smallint, \
         s_remote_cnt smallint, s_data varchar(50), PRIMARY KEY(s_w_id, s_i_id)) Engine=InnoDB",
    ),
];

/// `add_fkey_idx.sql`: one ALTER TABLE per table (indexes and foreign keys together, so each
/// table is rebuilt at most once), run with FOREIGN_KEY_CHECKS=0 after the data is in.
pub const INDEXES_AND_KEYS: [(&str, &str); 7] = [
    (
        "district",
        "ALTER TABLE district ADD CONSTRAINT fkey_district_1 FOREIGN KEY(d_w_id) \
         REFERENCES warehouse(w_id)",
    ),
    (
        "customer",
        "ALTER TABLE customer ADD INDEX idx_customer (c_w_id,c_d_id,c_last,c_first), \
         ADD CONSTRAINT fkey_customer_1 FOREIGN KEY(c_w_id,c_d_id) REFERENCES district(d_w_id,d_id)",
    ),
    (
        "history",
        "ALTER TABLE history \
         ADD CONSTRAINT fkey_history_1 FOREIGN KEY(h_c_w_id,h_c_d_id,h_c_id) \
         REFERENCES customer(c_w_id,c_d_id,c_id), \
         ADD CONSTRAINT fkey_history_2 FOREIGN KEY(h_w_id,h_d_id) REFERENCES district(d_w_id,d_id)",
    ),
    (
        "new_orders",
        "ALTER TABLE new_orders ADD CONSTRAINT fkey_new_orders_1 \
         FOREIGN KEY(no_w_id,no_d_id,no_o_id) REFERENCES orders(o_w_id,o_d_id,o_id)",
    ),
    (
        "orders",
        "ALTER TABLE orders ADD INDEX idx_orders (o_w_id,o_d_id,o_c_id,o_id), \
         ADD CONSTRAINT fkey_orders_1 FOREIGN KEY(o_w_id,o_d_id,o_c_id) \
         REFERENCES customer(c_w_id,c_d_id,c_id)",
    ),
    (
        "order_line",
        "ALTER TABLE order_line ADD INDEX fkey_order_line_2 (ol_supply_w_id,ol_i_id), \
         ADD CONSTRAINT fkey_order_line_1 FOREIGN KEY(ol_w_id,ol_d_id,ol_o_id) \
         REFERENCES orders(o_w_id,o_d_id,o_id), \
         ADD CONSTRAINT fkey_order_line_2 FOREIGN KEY(ol_supply_w_id,ol_i_id) \
         REFERENCES stock(s_w_id,s_i_id)",
    ),
    (
        "stock",
        "ALTER TABLE stock ADD INDEX fkey_stock_2 (s_i_id), \
         ADD CONSTRAINT fkey_stock_1 FOREIGN KEY(s_w_id) REFERENCES warehouse(w_id), \
         ADD CONSTRAINT fkey_stock_2 FOREIGN KEY(s_i_id) REFERENCES item(i_id)",
    ),
];

/// The marker: what was loaded, with which NURand constants, and how many runs changed it.
pub const CREATE_MARKER: &str = "CREATE TABLE spindle_tpcc (id tinyint not null, \
     warehouses int not null, seed bigint unsigned not null, c_last_load int not null, \
     c_id_load int not null, ol_i_id_load int not null, loaded_at datetime not null, \
     runs int not null, primary key (id)) Engine=InnoDB";

/// Which of the nine tables (and the marker) exist in the connection's database.
pub async fn existing_tables(conn: &mut Conn) -> Result<Vec<String>, mysql_async::Error> {
    let names: Vec<String> = conn
        .query(
            "SELECT LOWER(table_name) FROM information_schema.tables \
             WHERE table_schema = DATABASE()",
        )
        .await?;
    Ok(names
        .into_iter()
        .filter(|n| TABLES.contains(&n.as_str()) || n == MARKER)
        .collect())
}

/// The nine tables missing from `existing`, in creation order.
pub fn missing(existing: &[String]) -> Vec<&'static str> {
    CREATE
        .iter()
        .map(|(t, _)| *t)
        .filter(|t| !existing.iter().any(|e| e == t))
        .collect()
}

/// `Ok` when all nine tables stand in the connection's database (`database`, for the error);
/// `Err` when the table list cannot be read or some are missing ([`TpccError::TablesMissing`]).
pub async fn require_tables(conn: &mut Conn, database: &str) -> anyhow::Result<()> {
    let existing = existing_tables(conn)
        .await
        .map_err(|e| anyhow::anyhow!("reading the table list: {}", describe_error(&e)))?;
    let missing = missing(&existing);
    if !missing.is_empty() {
        return Err(TpccError::TablesMissing {
            database: database.to_string(),
            missing: missing.iter().map(|s| s.to_string()).collect(),
        }
        .into());
    }
    Ok(())
}

/// What the marker row says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Marker {
    pub warehouses: u32,
    pub seed: u64,
    pub nu: super::random::NuConstants,
    /// Runs started on this data since it was loaded.
    pub runs: u32,
}

/// Reads the marker row (`None` when the table or the row is missing: data not loaded by
/// spindle).
pub async fn read_marker(conn: &mut Conn) -> Result<Option<Marker>, mysql_async::Error> {
    if !existing_tables(conn).await?.iter().any(|t| t == MARKER) {
        return Ok(None);
    }
    let row: Option<(u32, u64, u32, u32, u32, u32)> = conn
        .query_first(
            "SELECT warehouses, seed, c_last_load, c_id_load, ol_i_id_load, runs \
             FROM spindle_tpcc WHERE id = 1",
        )
        .await?;
    Ok(row.map(|(w, seed, a, b, c, runs)| Marker {
        warehouses: w,
        seed,
        nu: super::random::NuConstants {
            c_last: a,
            c_id: b,
            ol_i_id: c,
        },
        runs,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_table_is_created_dropped_and_indexed_once() {
        let mut created: Vec<&str> = CREATE.iter().map(|(t, _)| *t).collect();
        let mut dropped = TABLES.to_vec();
        created.sort_unstable();
        dropped.sort_unstable();
        assert_eq!(created, dropped);
        for (t, sql) in CREATE {
            assert!(sql.starts_with(&format!("CREATE TABLE {t} (")), "{sql}");
        }
        for (t, sql) in INDEXES_AND_KEYS {
            assert!(sql.contains(&format!(" TABLE {t}")), "{sql}");
        }
        // The ten foreign keys and four indexes of add_fkey_idx.sql.
        let all: String = INDEXES_AND_KEYS.iter().map(|(_, s)| *s).collect();
        assert_eq!(all.matches("FOREIGN KEY").count(), 10);
        assert_eq!(all.matches("ADD INDEX").count(), 4);
    }

    #[test]
    fn missing_lists_absent_tables_in_creation_order() {
        let have = vec!["item".to_string(), "stock".into(), MARKER.into()];
        let m = missing(&have);
        assert_eq!(m.len(), 7);
        assert_eq!(m[0], "warehouse");
        assert!(!m.contains(&"item"));
    }
}
