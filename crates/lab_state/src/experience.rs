//! When an experiment counts as experienced, for the course page that embeds the Lab or the LMS
//! that launched it: once per experiment, with the time it took since it was opened.

/// An experiment counts as experienced once it has trained this many steps.
pub const EXPERIENCED_STEPS: u64 = 50;

/// The experiments reported so far on this page, and when the one on show was opened.
#[derive(Debug, Clone, PartialEq)]
pub struct ExperienceLog {
    reported: Vec<String>,
    shown: Option<String>,
    opened_ms: f64,
}

impl ExperienceLog {
    pub fn new(now_ms: f64) -> Self {
        Self {
            reported: Vec::new(),
            shown: None,
            opened_ms: now_ms,
        }
    }

    /// Notes that `experiment` is on show with `steps` trained at `now_ms`. Returns the seconds
    /// since it was opened when it is experienced now and was never reported before (the one
    /// moment to report it); another experiment restarts the clock.
    pub fn observe(&mut self, experiment: &str, steps: u64, now_ms: f64) -> Option<f64> {
        if self.shown.as_deref() != Some(experiment) {
            self.shown = Some(experiment.to_string());
            self.opened_ms = now_ms;
        }
        if steps < EXPERIENCED_STEPS || self.reported.iter().any(|r| r == experiment) {
            return None;
        }
        self.reported.push(experiment.to_string());
        Some((now_ms - self.opened_ms) / 1000.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_experiment_is_reported_once_with_its_own_time() {
        let mut log = ExperienceLog::new(0.0);
        assert_eq!(log.observe("scaling", 0, 1_000.0), None, "opened at 1 s");
        assert_eq!(log.observe("scaling", EXPERIENCED_STEPS - 1, 5_000.0), None);
        assert_eq!(log.observe("scaling", EXPERIENCED_STEPS, 7_500.0), Some(6.5));
        assert_eq!(log.observe("scaling", 400, 9_000.0), None, "reported once");
        assert_eq!(log.observe("norms", 0, 10_000.0), None);
        assert_eq!(
            log.observe("norms", 60, 12_000.0),
            Some(2.0),
            "its clock started when shown"
        );
        // Back to an experiment already reported: never again, whatever it trains.
        assert_eq!(log.observe("scaling", 0, 13_000.0), None);
        assert_eq!(log.observe("scaling", 100, 20_000.0), None);
    }
}
