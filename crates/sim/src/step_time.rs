//! How long a run's optimizer steps take, by the clock of the engine that trains it: what
//! accumulation costs in time, beside the memory it saves.

use serde::{Deserialize, Serialize};

/// Steps the mean is taken over: recent enough to leave the first steps' warm-up behind, many
/// enough to smooth a browser's coarse clock (100 µs without cross-origin isolation).
pub const RECENT_STEPS: usize = 20;

/// The training time of a run's latest optimizer steps.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct StepTimes {
    /// Milliseconds of the latest steps, oldest first, at most [`RECENT_STEPS`].
    recent_ms: Vec<f64>,
    /// Steps timed since the run began.
    steps: u64,
}

impl StepTimes {
    /// Adds one step's time; a time that is not a finite, non-negative number of milliseconds is
    /// not a measurement and is left out.
    pub fn push(&mut self, ms: f64) {
        if !ms.is_finite() || ms < 0.0 {
            return;
        }
        if self.recent_ms.len() == RECENT_STEPS {
            self.recent_ms.remove(0);
        }
        self.recent_ms.push(ms);
        self.steps += 1;
    }

    /// Mean milliseconds per optimizer step over the latest steps; none before any step.
    pub fn mean_ms(&self) -> Option<f64> {
        (!self.recent_ms.is_empty()).then(|| self.recent_ms.iter().sum::<f64>() / self.recent_ms.len() as f64)
    }

    /// How many steps the mean is over.
    pub fn recent_steps(&self) -> usize {
        self.recent_ms.len()
    }

    pub fn steps(&self) -> u64 {
        self.steps
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mean_is_over_the_latest_steps_and_skips_what_is_no_time() {
        let mut times = StepTimes::default();
        assert_eq!(times.mean_ms(), None);
        // A slow first step (warm-up), then steady ones: after RECENT_STEPS more it is gone.
        times.push(100.0);
        assert_eq!(times.mean_ms(), Some(100.0));
        for _ in 0..RECENT_STEPS {
            times.push(2.0);
        }
        assert_eq!(times.mean_ms(), Some(2.0));
        assert_eq!(
            (times.recent_steps(), times.steps()),
            (RECENT_STEPS, RECENT_STEPS as u64 + 1)
        );
        times.push(f64::NAN);
        times.push(-1.0);
        times.push(f64::INFINITY);
        assert_eq!(times.steps(), RECENT_STEPS as u64 + 1);
        times.push(4.0);
        assert!((times.mean_ms().unwrap() - (2.0 * 19.0 + 4.0) / 20.0).abs() < 1e-12);
    }
}
