//! The engines every shared test body runs against, each with the tolerance it is held to.
//! A new engine (the GPU one) is added here once and gets every test.

use gradlab::sim::backend::TrainingBackend;
use gradlab::sim::lab::{Lab, LabConfig};
use gradlab::sim::reference::ReferenceEngine;

pub type AnyLab = Lab<Box<dyn TrainingBackend>>;

#[derive(Debug, Clone, Copy)]
pub struct Backend {
    pub name: &'static str,
    /// Relative tolerance for quantities that are equal in exact arithmetic.
    pub tolerance: f64,
    pub make: fn(LabConfig) -> AnyLab,
}

fn cpu_f32(config: LabConfig) -> AnyLab {
    Lab::new(config, |run, layout, params, buffers, data| {
        Ok(Box::new(ReferenceEngine::<f32>::new(
            layout,
            params,
            buffers,
            run.optimizer,
            &data.test,
        )?) as Box<dyn TrainingBackend>)
    })
    .expect("valid test config")
}

fn cpu_f64(config: LabConfig) -> AnyLab {
    Lab::new(config, |run, layout, params, buffers, data| {
        Ok(Box::new(ReferenceEngine::<f64>::new(
            layout,
            params,
            buffers,
            run.optimizer,
            &data.test,
        )?) as Box<dyn TrainingBackend>)
    })
    .expect("valid test config")
}

pub const CPU_F32: Backend = Backend {
    name: "cpu-f32",
    tolerance: 1e-6,
    make: cpu_f32,
};

pub const CPU_F64: Backend = Backend {
    name: "cpu-f64",
    tolerance: 1e-12,
    make: cpu_f64,
};

/// Instantiates each named test body (`fn(&Backend)`) once per engine.
#[macro_export]
macro_rules! for_every_backend {
    ($($test:ident),* $(,)?) => {
        mod cpu_f32 {
            $( #[test] fn $test() { super::$test(&super::backends::CPU_F32) } )*
        }
        mod cpu_f64 {
            $( #[test] fn $test() { super::$test(&super::backends::CPU_F64) } )*
        }
    };
}
