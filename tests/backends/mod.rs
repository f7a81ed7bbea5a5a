//! The engines every shared test body runs against, each with the tolerance it is held to.
//! A new engine (the GPU one) is added here once and gets every test.

#![allow(dead_code, reason = "each test binary uses a different subset")]

use std::sync::{Arc, OnceLock};

use gradlab::gpu::context::GpuContext;
use gradlab::gpu::engine::GpuEngine;
use gradlab::gpu::ops::GpuOps;
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
    Lab::new(config, |setup| -> Result<_, gradlab::sim::SimError> {
        Ok(Box::new(ReferenceEngine::<f32>::for_run(setup)?) as Box<dyn TrainingBackend>)
    })
    .expect("valid test config")
}

fn cpu_f64(config: LabConfig) -> AnyLab {
    Lab::new(config, |setup| -> Result<_, gradlab::sim::SimError> {
        Ok(Box::new(ReferenceEngine::<f64>::for_run(setup)?) as Box<dyn TrainingBackend>)
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

/// One device for every GPU test of a test binary; `None` only when the run opted out of GPU
/// tests explicitly (GRADLAB_SKIP_GPU_TESTS=1). Without an adapter otherwise, the tests fail.
pub fn gpu_device() -> Option<&'static (GpuContext, Arc<GpuOps>)> {
    static DEVICE: OnceLock<Option<(GpuContext, Arc<GpuOps>)>> = OnceLock::new();
    let device = DEVICE
        .get_or_init(|| match pollster::block_on(GpuContext::new()) {
            Ok(context) => {
                let ops = GpuOps::shared(&context);
                Some((context, ops))
            }
            Err(error) if std::env::var("GRADLAB_SKIP_GPU_TESTS").as_deref() == Ok("1") => {
                eprintln!("SKIPPED GPU tests: {error} (GRADLAB_SKIP_GPU_TESTS=1)");
                None
            }
            Err(error) => panic!(
                "{error}. GPU tests need a Vulkan adapter: install Mesa lavapipe \
                 (apt-get install mesa-vulkan-drivers libvulkan1), or set GRADLAB_SKIP_GPU_TESTS=1 to skip knowingly"
            ),
        })
        .as_ref();
    if device.is_none() {
        crate::common::record_skip("GPU");
    }
    device
}

fn gpu(config: LabConfig) -> AnyLab {
    let (context, ops) = gpu_device().expect("checked by the caller");
    Lab::new(config, |setup| -> Result<_, gradlab::gpu::lab::GpuLabError> {
        Ok(Box::new(GpuEngine::new(context, ops, setup)?) as Box<dyn TrainingBackend>)
    })
    .expect("valid test config")
}

/// The GPU engine in f32, held to about 1e-5 relative against exact arithmetic.
pub const GPU: Backend = Backend {
    name: "gpu",
    tolerance: 1e-5,
    make: gpu,
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
        mod gpu {
            $( #[test] fn $test() {
                if super::backends::gpu_device().is_some() {
                    super::$test(&super::backends::GPU)
                }
            } )*
        }
    };
}
