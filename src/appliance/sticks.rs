//! The results stick as the daemon follows it: which stick is in (found by label, or an
//! unlabelled FAT/exFAT filesystem with a `spindle/` folder, probed once per filesystem), its
//! `spindle.toml` read when it arrives, and the inserted/removed events for the state machine.

use super::state::Event;
use crate::config::appliance::StickOverrides;
use crate::disk::Disk;
use crate::sink::settings::StickConfig;
use crate::sink::{self, ResultsStick};
use crate::sys::System;
use std::collections::HashMap;
use std::path::PathBuf;

/// The stick in the slot, if any, and what it asks for.
#[derive(Default)]
pub(super) struct StickWatch {
    /// The stick in, as last seen.
    pub current: Option<ResultsStick>,
    /// Its spindle.toml's settings (profile, erase list, autostart), when it has a valid one.
    pub overrides: Option<StickOverrides>,
    /// Unlabelled FAT/exFAT filesystems already looked at for a `spindle/` folder.
    probed: HashMap<String, bool>,
}

impl StickWatch {
    /// Compares a scan with the stick in the slot; returns the events, in order (a stick swapped
    /// for another is a removal, then an insertion).
    pub fn update(&mut self, scanned: &[Disk], cfg: &StickConfig, sys: &System) -> Vec<Event> {
        let probe_dir = {
            let mut p = cfg.mount_dir.clone().into_os_string();
            p.push("-probe");
            PathBuf::from(p)
        };
        let (cache, runner) = (&mut self.probed, &sys.runner);
        let mut seen = Vec::new();
        let found = sink::stick::sticks_among(scanned, &sys.root, cfg, &mut |s| {
            let key = format!("{} {} {:?}", s.device.display(), s.fs_type, s.label);
            seen.push(key.clone());
            *cache
                .entry(key)
                .or_insert_with(|| sink::stick::probe_marker(s, &probe_dir, runner))
        })
        .into_iter()
        .next();
        // forget filesystems that went away, so a re-inserted stick is looked at again
        self.probed.retain(|k, _| seen.contains(k));
        let same = |a: &ResultsStick, b: &ResultsStick| a.device == b.device && a.label == b.label;
        match (&self.current, found) {
            (None, Some(s)) => vec![self.inserted(s, cfg, sys)],
            (Some(old), Some(s)) if !same(old, &s) => {
                vec![self.removed(), self.inserted(s, cfg, sys)]
            }
            (Some(_), None) => vec![self.removed()],
            _ => Vec::new(),
        }
    }

    fn inserted(&mut self, s: ResultsStick, cfg: &StickConfig, sys: &System) -> Event {
        crate::sys::log::say!(
            "results stick {} ({}, {}) inserted",
            s.name(),
            s.device.display(),
            s.fs_type
        );
        let ins = sink::inspect(&s, cfg, &sys.runner);
        self.overrides = ins.overrides;
        self.current = Some(s);
        Event::StickInserted {
            config_ok: ins.config_error.is_none(),
        }
    }

    fn removed(&mut self) -> Event {
        crate::sys::log::say!("results stick removed");
        self.current = None;
        self.overrides = None;
        Event::StickRemoved
    }
}
