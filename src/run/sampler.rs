//! Samples temperature and throttling in the background while a target runs.

use crate::sys::state::{self, StateSample};
use crate::sys::SysRoot;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A background thread sampling every `every` until [`finish`](Sampler::finish).
pub struct Sampler {
    samples: Arc<Mutex<Vec<StateSample>>>,
    stop: Arc<AtomicBool>,
    handle: Option<std::thread::JoinHandle<()>>,
}

impl Sampler {
    pub fn start(root: SysRoot, every: Duration) -> Self {
        let samples = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (s2, st2) = (Arc::clone(&samples), Arc::clone(&stop));
        let handle = std::thread::Builder::new()
            .name("state-sampler".into())
            .spawn(move || {
                let t0 = Instant::now();
                let mut next = t0;
                while !st2.load(Ordering::Relaxed) {
                    if Instant::now() >= next {
                        let sample = state::sample(root.root(), t0.elapsed().as_secs_f64());
                        if sample.temp_c.is_some()
                            || sample.throttled.is_some()
                            || sample.undervoltage.is_some()
                        {
                            s2.lock().unwrap_or_else(|e| e.into_inner()).push(sample);
                        }
                        next += every;
                    }
                    std::thread::sleep(Duration::from_millis(200));
                }
            })
            .ok();
        Sampler {
            samples,
            stop,
            handle,
        }
    }

    /// The samples so far.
    pub fn snapshot(&self) -> Vec<StateSample> {
        self.samples
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Stops sampling and returns every sample.
    pub fn finish(mut self) -> Vec<StateSample> {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
        self.snapshot()
    }
}

impl Drop for Sampler {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}
