//! `spindle daemon`: loads the appliance configuration, opens the LEDs, and runs the loop.

use crate::appliance::daemon::{run_daemon, DaemonDeps};
use crate::appliance::launch::SuiteLauncher;
use crate::cli::DaemonArgs;
use crate::config::appliance::ApplianceSettings;
use std::sync::Arc;

pub fn run(args: DaemonArgs) -> anyhow::Result<i32> {
    let mut settings = ApplianceSettings::load(args.config.as_deref())?;
    if let Some(b) = args.status {
        settings.status.backend = b;
    }
    if args.autostart {
        settings.appliance.autostart = true;
    }
    settings.validate()?;
    let stop = crate::engine::Controller::on_signals();
    crate::status::indicator::install_panic_hook();
    let indicator = crate::status::open_indicator(&settings.status)?;
    let deps = DaemonDeps {
        indicator,
        launcher: Arc::new(SuiteLauncher::for_settings(&settings)),
        gpio_button: settings.button.enabled,
    };
    run_daemon(settings, deps, &stop)?;
    Ok(0)
}
