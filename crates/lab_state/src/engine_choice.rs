//! Which engine trains the Lab: the faster one on this machine. WebGPU trains first; once it
//! has trained for [`GPU_TRIAL_MS`] (its first, warm-up frame not counted), the CPU engine
//! replays the same steps of the same experiment and the two speeds decide. A software adapter
//! (SwiftShader, lavapipe) measures slower than the CPU engine and loses; a hardware GPU wins.
//! The replay is the switch: the CPU engine continues from the step WebGPU reached, so no
//! number shown changes.

use gradlab_i18n::Msg;

/// How long WebGPU trains (after its first frame) before the CPU engine is measured against it:
/// a few frames on a hardware GPU, one step on a software adapter, where a step can take a second.
pub const GPU_TRIAL_MS: f64 = 150.0;

/// The CPU engine takes over only when it is at least this many times faster: close to even,
/// WebGPU keeps the page's main thread free.
pub const CPU_MARGIN: f64 = 1.2;

/// What the URL asks for: `engine=cpu` or `engine=gpu` force one, otherwise the faster.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum EnginePreference {
    #[default]
    Faster,
    Cpu,
    Gpu,
}

/// WebGPU's time so far, measured over whole frames of training.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct GpuTrial {
    frames: u32,
    steps: u64,
    ms: f64,
}

impl GpuTrial {
    /// Counts a frame that trained `steps` steps in `ms` milliseconds; the first frame compiles
    /// pipelines and is left out.
    pub fn record(&mut self, steps: u64, ms: f64) {
        self.frames += 1;
        if self.frames > 1 && steps > 0 {
            self.steps += steps;
            self.ms += ms;
        }
    }

    /// WebGPU's milliseconds per step, once it has trained long enough to judge.
    pub fn measured(&self) -> Option<f64> {
        (self.ms >= GPU_TRIAL_MS && self.steps >= 1).then(|| self.ms / self.steps as f64)
    }

    /// How long the CPU engine may take to replay `steps` steps and still win: past this it is
    /// not [`CPU_MARGIN`] times faster, and the replay stops early.
    pub fn cpu_deadline_ms(gpu_ms_per_step: f64, steps: u64) -> f64 {
        gpu_ms_per_step * steps as f64 / CPU_MARGIN
    }
}

/// The outcome of the race, with the figures the badge states.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Verdict {
    /// The CPU engine is `times` times faster (at least [`CPU_MARGIN`]).
    Cpu { times: f64 },
    /// WebGPU is at least `times` times as fast as the CPU engine (the CPU replay may have been
    /// stopped early, so this is a lower bound).
    Gpu { times: f64 },
}

impl Verdict {
    /// Compares the two speeds (a CPU replay stopped at its deadline passes the time per step
    /// it had reached, a lower bound).
    pub fn of(gpu_ms_per_step: f64, cpu_ms_per_step: f64) -> Self {
        let ratio = gpu_ms_per_step / cpu_ms_per_step.max(f64::MIN_POSITIVE);
        if ratio >= CPU_MARGIN {
            Verdict::Cpu { times: ratio }
        } else {
            Verdict::Gpu { times: 1.0 / ratio }
        }
    }

    pub fn uses_cpu(self) -> bool {
        matches!(self, Verdict::Cpu { .. })
    }

    /// What the engine badge adds: "12× faster than WebGPU on this machine".
    pub fn message(self) -> Msg {
        match self {
            Verdict::Cpu { times } => Msg::new("engine-chosen-cpu").arg("times", format!("{times:.1}")),
            Verdict::Gpu { times } => Msg::new("engine-chosen-gpu").arg("times", format!("{times:.1}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_trial_leaves_out_the_first_frame_and_waits_long_enough() {
        let mut trial = GpuTrial::default();
        trial.record(1, 900.0);
        assert_eq!(trial.measured(), None, "the warm-up frame does not count");
        trial.record(4, 60.0);
        assert_eq!(trial.measured(), None, "60 ms is too short to judge");
        trial.record(4, 140.0);
        assert_eq!(trial.measured(), Some(25.0));
    }

    #[test]
    fn a_software_adapter_loses_a_hardware_gpu_wins_and_close_keeps_webgpu() {
        // The hostile pass's figures: SwiftShader 27 steps/s, the CPU engine 261 steps/s.
        let swiftshader = Verdict::of(1000.0 / 27.0, 1000.0 / 261.0);
        assert!(swiftshader.uses_cpu());
        assert_eq!(swiftshader.message().args, vec![("times", "9.7".to_string())]);
        let hardware = Verdict::of(0.5, 4.0);
        assert_eq!(hardware, Verdict::Gpu { times: 8.0 });
        // 10 % faster is not worth the main thread.
        assert!(!Verdict::of(11.0, 10.0).uses_cpu());
        assert!(Verdict::of(12.0, 10.0).uses_cpu());
    }

    #[test]
    fn the_cpu_replay_stops_once_it_cannot_win() {
        assert_eq!(GpuTrial::cpu_deadline_ms(12.0, 10), 100.0);
    }
}
