//! The vendored mysql_async's fifth patch reads the handshake's server version and the server's
//! RSA key by hand instead of with mysql_common's regexes (vendor/README.md). These tests pin the
//! hand-written parsers to mysql_common's own on the strings and keys servers send.

use mysql_async::spindle_parsers::{parse_server_version, pem_to_der};
use mysql_common::constants::{CapabilityFlags, StatusFlags};
use mysql_common::crypto::der;
use mysql_common::packets::HandshakePacket;

/// What mysql_common (0.37) reads from a handshake's version string: MariaDB's version when its
/// regex matches (and then the flag), else the plain one.
fn reference(version: &str) -> ((u16, u16, u16), bool) {
    let hs = HandshakePacket::new(
        10,
        version.as_bytes(),
        1,
        [0; 8],
        None::<&[u8]>,
        CapabilityFlags::empty(),
        0,
        StatusFlags::empty(),
        None::<&[u8]>,
    );
    match hs.maria_db_server_version_parsed() {
        Some(v) => (v, true),
        None => (hs.server_version_parsed().unwrap_or((0, 0, 0)), false),
    }
}

#[test]
fn server_versions_parse_as_mysql_common_parses_them() {
    let cases: &[(&str, (u16, u16, u16), bool)] = &[
        // MariaDB through the 5.5.5- prefix it sends for old clients, and without it.
        ("5.5.5-10.11.6-MariaDB-0+deb12u1", (10, 11, 6), true),
        ("5.5.5-10.11.19-MariaDB-0+deb12u1-log", (10, 11, 19), true),
        ("11.4.2-MariaDB-log", (11, 4, 2), true),
        ("10.6.16-MariaDB", (10, 6, 16), true),
        // MySQL and Percona Server.
        ("8.0.36", (8, 0, 36), false),
        ("8.4.0-1ubuntu1", (8, 4, 0), false),
        ("5.7.44-log", (5, 7, 44), false),
        ("8.0.36-28", (8, 0, 36), false),
        ("8.0.35-27.1-Percona-Server", (8, 0, 35), false),
        ("5.7.44-48-log", (5, 7, 44), false),
        // A 5.5.5- prefix without MariaDB is read as version 5.5.5.
        ("5.5.5-8.0.36", (5, 5, 5), false),
        // Not a version.
        ("", (0, 0, 0), false),
        ("MariaDB", (0, 0, 0), false),
        ("123.4.5", (0, 0, 0), false),
        ("8.0", (0, 0, 0), false),
    ];
    for &(v, version, maria) in cases {
        assert_eq!(
            parse_server_version(v.as_bytes()),
            (version, maria),
            "{v:?}"
        );
        assert_eq!(reference(v), (version, maria), "mysql_common on {v:?}");
    }
}

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(format!(
        "{}/tests/fixtures/rsa/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

#[test]
fn rsa_keys_in_both_pem_forms_decode_as_mysql_common_decodes_them() {
    let mut moduli = Vec::new();
    for (name, kind) in [
        ("pkcs1-public.pem", der::PubKeyFileType::Pkcs1),
        ("pkcs8-public.pem", der::PubKeyFileType::Pkcs8),
    ] {
        let pem = fixture(name);
        let (ours, our_kind) = pem_to_der(&pem).expect(name);
        let (theirs, their_kind) = der::pem_to_der(&pem);
        assert_eq!(ours, theirs, "{name}: DER differs from mysql_common's");
        assert_eq!(
            (format!("{our_kind:?}"), format!("{their_kind:?}")),
            (format!("{kind:?}"), format!("{kind:?}")),
            "{name}"
        );
        let (modulus, exponent) = der::parse_pub_key(&ours, our_kind);
        assert_eq!(exponent, 65537u32.into(), "{name}");
        assert_eq!(modulus.bits(), 2048, "{name}");
        moduli.push(modulus);
    }
    assert_eq!(moduli[0], moduli[1], "one key in two forms");
}

#[test]
fn a_key_that_is_not_pem_is_refused_not_a_panic() {
    let pem = fixture("pkcs8-public.pem");
    let text = String::from_utf8(pem).unwrap();
    for bad in [
        String::new(),
        "not a key".to_string(),
        text.replace("-----END PUBLIC KEY-----", ""),
        text.replace("MII", "M*I"),
        text.replace("BEGIN PUBLIC KEY", "BEGIN CERTIFICATE"),
    ] {
        assert!(pem_to_der(bad.as_bytes()).is_none(), "{bad:?}");
    }
}
