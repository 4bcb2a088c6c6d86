//! What the machine's health sensors said while a target ran — SoC temperature, under-voltage,
//! throttling — or that a sensor was not measured and why (`sys::sensors`). One reading for
//! summary.txt, report.html and the doubts, so none of them turns an absent sensor into "none
//! reported".

use crate::model::TargetResult;
use crate::sys::sensors::{Sensor, Sensors};
use crate::sys::state::{throttled_flags, StateSample};

/// The sensors of a target: probed with its state before (or after) the run.
fn sensors(t: &TargetResult) -> Option<&Sensors> {
    t.state_before
        .iter()
        .chain(t.state_after.iter())
        .find_map(|s| s.sensors.as_ref())
}

fn all_samples(t: &TargetResult) -> impl Iterator<Item = &StateSample> {
    t.samples
        .iter()
        .chain(t.state_before.iter().map(|s| &s.sample))
        .chain(t.state_after.iter().map(|s| &s.sample))
}

/// A target's health over its run.
#[derive(Clone, Debug, PartialEq)]
pub struct Health {
    /// Highest SoC temperature sampled (°C).
    pub max_temp_c: Option<f64>,
    /// Every throttling bit any sample had.
    pub throttled_bits: u32,
    /// Any sample saw the under-voltage alarm.
    pub undervoltage_seen: bool,
    /// Some sample carried the under-voltage alarm / the throttling flags (they were read).
    pub undervoltage_read: bool,
    /// "Undervoltage detected!" reports in the kernel log while the target ran.
    pub undervoltage_logged: u64,
    pub throttling_read: bool,
    /// What the probe said (None for bundles written before it was recorded).
    pub sensors: Option<Sensors>,
}

pub fn of(t: &TargetResult) -> Health {
    let mut h = Health {
        max_temp_c: None,
        throttled_bits: 0,
        undervoltage_seen: false,
        undervoltage_read: false,
        throttling_read: false,
        undervoltage_logged: match &t.usb_trouble {
            Some(crate::disk::kernel_log::UsbTroubleCount::Counted(c)) => c.undervoltage,
            _ => 0,
        },
        sensors: sensors(t).cloned(),
    };
    for x in all_samples(t) {
        if let Some(c) = x.temp_c {
            h.max_temp_c = Some(h.max_temp_c.map_or(c, |m: f64| m.max(c)));
        }
        if let Some(b) = x.throttled {
            h.throttling_read = true;
            h.throttled_bits |= b;
        }
        if let Some(u) = x.undervoltage {
            h.undervoltage_read = true;
            h.undervoltage_seen |= u;
        }
    }
    h
}

/// Why a sensor has no reading: the probe's reason, or (old bundles) that it was not recorded.
fn not_measured(s: Option<&Sensor>) -> String {
    match s.and_then(Sensor::reason) {
        Some(r) => format!("not measured ({r})"),
        None => "not measured (no reading was recorded)".into(),
    }
}

impl Health {
    /// The temperature line: `max 61.3 °C` or `not measured (…)`.
    pub fn temperature(&self) -> String {
        match self.max_temp_c {
            Some(m) => format!("max {m:.1} °C"),
            None => not_measured(self.sensors.as_ref().map(|s| &s.temperature)),
        }
    }

    /// The under-voltage line: `SEEN`, `none seen`, or `not measured (…)`.
    pub fn undervoltage(&self) -> String {
        if self.undervoltage_logged > 0 {
            format!(
                "SEEN: the supply voltage dropped too low (the kernel reported it {} time{})",
                self.undervoltage_logged,
                if self.undervoltage_logged == 1 {
                    ""
                } else {
                    "s"
                }
            )
        } else if self.undervoltage_seen || self.throttled_bits & 0x10001 != 0 {
            "SEEN: the supply voltage dropped too low".into()
        } else if self.undervoltage_read || self.throttling_read {
            "none seen".into()
        } else {
            not_measured(self.sensors.as_ref().map(|s| &s.undervoltage))
        }
    }

    /// The throttling line: the flags, `none reported`, or `not measured (…)`.
    pub fn throttling(&self) -> String {
        if self.throttled_bits != 0 {
            throttled_flags(self.throttled_bits).join(", ")
        } else if self.throttling_read {
            "none reported".into()
        } else {
            not_measured(self.sensors.as_ref().map(|s| &s.throttling))
        }
    }

    /// Whether under-voltage could have happened unseen on a Raspberry Pi.
    pub fn undervoltage_unmeasured_on_a_pi(&self) -> bool {
        !self.undervoltage_read
            && !self.throttling_read
            && self.sensors.as_ref().is_some_and(|s| s.raspberry_pi)
    }

    /// The doubts these readings raise (for `doubts::of_result`: each result of the target).
    pub fn doubts(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.throttled_bits != 0 {
            out.push(format!(
                "the Pi reported {} during the run: figures may be low.",
                throttled_flags(self.throttled_bits).join(", ")
            ));
        } else if self.undervoltage_seen || self.undervoltage_logged > 0 {
            out.push("under-voltage was detected during the run: figures may be low and USB disks may reset.".into());
        } else if self.undervoltage_unmeasured_on_a_pi() {
            out.push(format!(
                "under-voltage was {}: a Pi powering USB disks from its own ports can sag without this report knowing.",
                self.undervoltage()
            ));
        }
        out
    }

    /// For the "no doubts" sentence: what was checked about power, in words.
    pub fn power_checked(&self) -> Option<&'static str> {
        (self.undervoltage_read || self.throttling_read)
            .then_some("no throttling or under-voltage was reported")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sys::state::SystemState;

    fn target(samples: Vec<StateSample>, sensors: Option<Sensors>) -> TargetResult {
        let mut t: TargetResult = serde_json::from_value(serde_json::json!({
            "name": "sda", "kind": "disk", "path": "/mnt", "description": "",
            "preparation": [], "samples": [], "phases": []
        }))
        .unwrap();
        t.samples = samples;
        t.state_before = Some(SystemState {
            sensors,
            ..SystemState::default()
        });
        t
    }

    fn pi_image_sensors() -> Sensors {
        Sensors {
            temperature: Sensor::Measured {
                source: "thermal zone thermal_zone0 (cpu-thermal)".into(),
            },
            undervoltage: Sensor::NotMeasured {
                reason: "the raspberrypi-hwmon driver is loaded but the firmware registered no voltage sensor".into(),
            },
            throttling: Sensor::NotMeasured {
                reason: "this kernel has no get_throttled file".into(),
            },
            raspberry_pi: true,
        }
    }

    #[test]
    fn an_absent_sensor_is_not_measured_never_none_reported() {
        let t = target(
            vec![StateSample {
                t_s: 1.0,
                temp_c: Some(55.0),
                throttled: None,
                undervoltage: None,
            }],
            Some(pi_image_sensors()),
        );
        let h = of(&t);
        assert_eq!(h.temperature(), "max 55.0 °C");
        assert!(h
            .undervoltage()
            .starts_with("not measured (the raspberrypi-hwmon driver is loaded"));
        assert_eq!(
            h.throttling(),
            "not measured (this kernel has no get_throttled file)"
        );
        assert_eq!(h.power_checked(), None);
        let d = h.doubts();
        assert_eq!(d.len(), 1, "{d:?}");
        assert!(
            d[0].starts_with("under-voltage was not measured ("),
            "{d:?}"
        );
    }

    #[test]
    fn readings_that_were_taken_say_what_they_saw() {
        let ok = StateSample {
            t_s: 0.0,
            temp_c: None,
            throttled: None,
            undervoltage: Some(false),
        };
        let h = of(&target(vec![ok.clone()], Some(pi_image_sensors())));
        assert_eq!(h.undervoltage(), "none seen");
        assert!(h.doubts().is_empty());
        assert!(h.power_checked().is_some());
        assert!(h.temperature().starts_with("not measured (no reading"));
        let bad = StateSample {
            undervoltage: Some(true),
            ..ok
        };
        let h = of(&target(vec![bad], None));
        assert!(h.undervoltage().starts_with("SEEN"));
        assert!(h.doubts()[0].contains("under-voltage was detected"));
        let thr = StateSample {
            t_s: 0.0,
            temp_c: None,
            throttled: Some(0x50005),
            undervoltage: None,
        };
        let h = of(&target(vec![thr], None));
        assert!(h.throttling().contains("throttled now"));
        assert!(h.doubts()[0].starts_with("the Pi reported under-voltage now"));
    }

    #[test]
    fn an_undervoltage_between_two_samples_is_seen_in_the_kernel_log() {
        let ok = StateSample {
            t_s: 0.0,
            temp_c: None,
            throttled: None,
            undervoltage: Some(false),
        };
        let mut t = target(vec![ok], Some(pi_image_sensors()));
        let c = crate::disk::kernel_log::TroubleCount {
            undervoltage: 3,
            ..Default::default()
        };
        t.usb_trouble = Some(crate::disk::kernel_log::UsbTroubleCount::Counted(c));
        let h = of(&t);
        assert_eq!(
            h.undervoltage(),
            "SEEN: the supply voltage dropped too low (the kernel reported it 3 times)"
        );
        assert!(h.doubts()[0].contains("under-voltage was detected"));
    }

    #[test]
    fn another_machine_raises_no_power_doubt() {
        let mut s = pi_image_sensors();
        s.raspberry_pi = false;
        s.undervoltage = Sensor::NotMeasured {
            reason: "not a Raspberry Pi: no firmware under-voltage flag".into(),
        };
        let h = of(&target(vec![], Some(s)));
        assert!(h.doubts().is_empty());
        assert_eq!(
            h.undervoltage(),
            "not measured (not a Raspberry Pi: no firmware under-voltage flag)"
        );
    }
}
