//! `spindle leds test`: shows every pattern in turn, for checking the wiring; every backend logs
//! each pattern with what each LED should do (`status::indicator::pattern_line`).

use crate::cli::LedsArgs;
use crate::config::appliance::ApplianceSettings;
use crate::status::{open_indicator, Pattern};
use std::time::{Duration, Instant};

pub fn run(args: LedsArgs) -> anyhow::Result<i32> {
    let mut settings = ApplianceSettings::load(args.config.as_deref())?;
    if let Some(b) = args.backend {
        settings.status.backend = b;
    }
    let stop = crate::engine::Controller::on_signals();
    crate::status::indicator::install_panic_hook();
    let mut ind = open_indicator(&settings.status)?;
    super::output::out(&format!(
        "LED test on the {} backend; Ctrl-C stops it.\n",
        ind.backend()
    ));
    for p in Pattern::all() {
        if stop.stop_requested() {
            break;
        }
        ind.show(p);
        let end = Instant::now() + Duration::from_secs_f64(args.seconds.max(0.1));
        while Instant::now() < end && !stop.stop_requested() {
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    ind.shutdown();
    Ok(0)
}
