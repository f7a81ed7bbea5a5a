//! Layer operations on every engine (CPU f32 and the GPU through wgpu, lavapipe in CI),
//! each compared with the f64 CPU reference under the engine's stated tolerance.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a test fails loudly at the first unexpected error"
)]

mod common;

use common::{random_vec, relative};
use gradlab::gpu::context::GpuContext;
use gradlab::gpu::ops::{GpuOps, LinearDims, Recorder, Submitter};
use gradlab::gpu::readback::read_f32;
use gradlab::sim::model::Activation;
use gradlab::sim::reference::{backward, forward, linear};
use gradlab::sim::rng::SeededRng;

/// The layer operations a backend offers, in plain vectors.
trait LayerOps {
    fn name(&self) -> &'static str;
    /// Relative tolerance against the f64 reference.
    fn tolerance(&self) -> f64;
    fn linear_forward(
        &mut self,
        x: &[f64],
        rows: usize,
        fan_in: usize,
        w: &[f64],
        b: &[f64],
        fan_out: usize,
    ) -> Vec<f64>;
    /// Returns (dW + grads_in, db + grads_in, dx), with `grads` seeded as given (accumulation).
    #[allow(clippy::type_complexity, reason = "three plain vectors")]
    fn linear_backward(
        &mut self,
        x: &[f64],
        rows: usize,
        fan_in: usize,
        w: &[f64],
        fan_out: usize,
        dy: &[f64],
        grads: &[f64],
    ) -> (Vec<f64>, Vec<f64>, Vec<f64>);
    fn activation_forward(&mut self, kind: Activation, u: &[f64]) -> Vec<f64>;
    fn activation_backward(&mut self, kind: Activation, u: &[f64], da: &[f64]) -> Vec<f64>;
}

fn to32(v: &[f64]) -> Vec<f32> {
    v.iter().map(|&x| x as f32).collect()
}
fn to64(v: &[f32]) -> Vec<f64> {
    v.iter().map(|&x| f64::from(x)).collect()
}

struct CpuF32;

impl LayerOps for CpuF32 {
    fn name(&self) -> &'static str {
        "cpu-f32"
    }
    fn tolerance(&self) -> f64 {
        1e-6
    }
    fn linear_forward(
        &mut self,
        x: &[f64],
        rows: usize,
        fan_in: usize,
        w: &[f64],
        b: &[f64],
        fan_out: usize,
    ) -> Vec<f64> {
        let mut y = vec![0f32; rows * fan_out];
        linear::forward(
            &to32(x),
            rows,
            fan_in,
            &to32(w),
            &to32(b),
            fan_out,
            &mut y,
            &mut Vec::new(),
        );
        to64(&y)
    }
    fn linear_backward(
        &mut self,
        x: &[f64],
        rows: usize,
        fan_in: usize,
        w: &[f64],
        fan_out: usize,
        dy: &[f64],
        grads: &[f64],
    ) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
        let mut g = to32(grads);
        let (dw, db) = g.split_at_mut(fan_in * fan_out);
        let mut dx = vec![0f32; rows * fan_in];
        linear::backward(
            &to32(x),
            rows,
            fan_in,
            &to32(w),
            fan_out,
            &to32(dy),
            dw,
            db,
            Some(&mut dx),
        );
        (to64(dw), to64(db), to64(&dx))
    }
    fn activation_forward(&mut self, kind: Activation, u: &[f64]) -> Vec<f64> {
        let mut a = vec![0f32; u.len()];
        forward::activation(kind, &to32(u), &mut a);
        to64(&a)
    }
    fn activation_backward(&mut self, kind: Activation, u: &[f64], da: &[f64]) -> Vec<f64> {
        let u32s = to32(u);
        let mut a = vec![0f32; u.len()];
        forward::activation(kind, &u32s, &mut a);
        let mut du = vec![0f32; u.len()];
        backward::activation(kind, &u32s, &a, &to32(da), &mut du);
        to64(&du)
    }
}

struct Gpu {
    context: GpuContext,
    ops: GpuOps,
}

impl Gpu {
    /// The GPU backend. With no adapter the test fails and says why, unless the run opted out
    /// explicitly with GRADLAB_SKIP_GPU_TESTS=1 (then it says it skipped).
    fn new() -> Option<Self> {
        match pollster::block_on(GpuContext::new()) {
            Ok(context) => {
                eprintln!("GPU tests on {} ({})", context.adapter_name, context.backend);
                let ops = GpuOps::new(&context);
                Some(Self { context, ops })
            }
            Err(error) if std::env::var("GRADLAB_SKIP_GPU_TESTS").as_deref() == Ok("1") => {
                eprintln!("SKIPPED GPU test: {error} (GRADLAB_SKIP_GPU_TESTS=1)");
                None
            }
            Err(error) => panic!(
                "{error}. GPU tests need a Vulkan adapter; install Mesa lavapipe \
                 (apt-get install mesa-vulkan-drivers libvulkan1) or set GRADLAB_SKIP_GPU_TESTS=1 to skip knowingly"
            ),
        }
    }

    fn run(&self, encode: impl FnOnce(&mut Recorder)) {
        let mut recorder = Recorder::new();
        encode(&mut recorder);
        Submitter::new().submit(&self.context, &self.ops, recorder);
    }

    fn read(&self, buffer: &wgpu::Buffer, len: usize) -> Vec<f64> {
        to64(&pollster::block_on(read_f32(&self.context, buffer, len)).unwrap())
    }
}

impl LayerOps for Gpu {
    fn name(&self) -> &'static str {
        "gpu"
    }
    fn tolerance(&self) -> f64 {
        1e-5
    }
    fn linear_forward(
        &mut self,
        x: &[f64],
        rows: usize,
        fan_in: usize,
        w: &[f64],
        b: &[f64],
        fan_out: usize,
    ) -> Vec<f64> {
        let mut params = w.to_vec();
        params.extend_from_slice(b);
        let x_buf = self.context.storage_buffer("x", &to32(x));
        let p_buf = self.context.storage_buffer("params", &to32(&params));
        let y_buf = self.context.zeroed_buffer("y", rows * fan_out);
        let dims = LinearDims {
            rows: rows as u32,
            fan_in: fan_in as u32,
            fan_out: fan_out as u32,
            weight_offset: 0,
            bias_offset: (fan_in * fan_out) as u32,
            x_offset: 0,
        };
        self.run(|e| self.ops.linear_forward(e, dims, &x_buf, &p_buf, &y_buf).unwrap());
        self.read(&y_buf, rows * fan_out)
    }
    fn linear_backward(
        &mut self,
        x: &[f64],
        rows: usize,
        fan_in: usize,
        w: &[f64],
        fan_out: usize,
        dy: &[f64],
        grads: &[f64],
    ) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
        let x_buf = self.context.storage_buffer("x", &to32(x));
        let w_buf = self.context.storage_buffer("params", &to32(w));
        let dy_buf = self.context.storage_buffer("dy", &to32(dy));
        let g_buf = self.context.storage_buffer("grads", &to32(grads));
        let dx_buf = self.context.zeroed_buffer("dx", rows * fan_in);
        let dims = LinearDims {
            rows: rows as u32,
            fan_in: fan_in as u32,
            fan_out: fan_out as u32,
            weight_offset: 0,
            bias_offset: (fan_in * fan_out) as u32,
            x_offset: 0,
        };
        self.run(|e| {
            self.ops
                .linear_backward_params(e, dims, &x_buf, &dy_buf, &g_buf)
                .unwrap();
            self.ops
                .linear_backward_input(e, dims, &dy_buf, &w_buf, &dx_buf)
                .unwrap();
        });
        let g = self.read(&g_buf, grads.len());
        let (dw, db) = g.split_at(fan_in * fan_out);
        (dw.to_vec(), db.to_vec(), self.read(&dx_buf, rows * fan_in))
    }
    fn activation_forward(&mut self, kind: Activation, u: &[f64]) -> Vec<f64> {
        let u_buf = self.context.storage_buffer("u", &to32(u));
        let a_buf = self.context.zeroed_buffer("a", u.len());
        self.run(|e| {
            self.ops
                .activation_forward(e, kind, u.len() as u32, &u_buf, &a_buf)
                .unwrap()
        });
        self.read(&a_buf, u.len())
    }
    fn activation_backward(&mut self, kind: Activation, u: &[f64], da: &[f64]) -> Vec<f64> {
        let u_buf = self.context.storage_buffer("u", &to32(u));
        let da_buf = self.context.storage_buffer("da", &to32(da));
        let du_buf = self.context.zeroed_buffer("du", u.len());
        self.run(|e| {
            self.ops
                .activation_backward(e, kind, u.len() as u32, &u_buf, &da_buf, &du_buf)
                .unwrap()
        });
        self.read(&du_buf, u.len())
    }
}

fn assert_close(backend: &dyn LayerOps, what: &str, got: &[f64], want: &[f64]) {
    let error = relative(got, want);
    assert!(
        error < backend.tolerance(),
        "{}: {what} off by {error:e} (tolerance {:e})",
        backend.name(),
        backend.tolerance()
    );
}

fn linear_matches_reference(backend: &mut dyn LayerOps) {
    let mut rng = SeededRng::new(11);
    for (rows, fan_in, fan_out) in [(1, 1, 1), (7, 2, 5), (64, 64, 3), (33, 17, 64)] {
        let x = random_vec(&mut rng, rows * fan_in, 1.0);
        let w = random_vec(&mut rng, fan_out * fan_in, 0.5);
        let b = random_vec(&mut rng, fan_out, 0.5);
        let dy = random_vec(&mut rng, rows * fan_out, 1.0);
        let grads = random_vec(&mut rng, fan_out * fan_in + fan_out, 0.1);
        let mut y = vec![0.0; rows * fan_out];
        linear::forward(&x, rows, fan_in, &w, &b, fan_out, &mut y, &mut Vec::new());
        let got = backend.linear_forward(&x, rows, fan_in, &w, &b, fan_out);
        assert_close(backend, "linear forward", &got, &y);
        let mut g = grads.clone();
        let (dw, db) = g.split_at_mut(fan_in * fan_out);
        let mut dx = vec![0.0; rows * fan_in];
        linear::backward(&x, rows, fan_in, &w, fan_out, &dy, dw, db, Some(&mut dx));
        let (got_dw, got_db, got_dx) = backend.linear_backward(&x, rows, fan_in, &w, fan_out, &dy, &grads);
        assert_close(backend, "dW (accumulated)", &got_dw, dw);
        assert_close(backend, "db (accumulated)", &got_db, db);
        assert_close(backend, "dx", &got_dx, &dx);
    }
}

fn activations_match_reference(backend: &mut dyn LayerOps) {
    let mut rng = SeededRng::new(12);
    let u: Vec<f64> = random_vec(&mut rng, 300, 2.0)
        .into_iter()
        .map(|v| if v.abs() < 1e-3 { 0.5 } else { v })
        .collect();
    let da = random_vec(&mut rng, 300, 1.0);
    for kind in Activation::ALL {
        let mut a = vec![0.0; u.len()];
        forward::activation(kind, &u, &mut a);
        let got = backend.activation_forward(kind, &u);
        assert_close(backend, &format!("{kind:?} forward"), &got, &a);
        let mut du = vec![0.0; u.len()];
        backward::activation(kind, &u, &a, &da, &mut du);
        let got = backend.activation_backward(kind, &u, &da);
        assert_close(backend, &format!("{kind:?} backward"), &got, &du);
    }
}

/// Far beyond where tanh saturates, up to f32's largest values: every engine gives the finite
/// values of exact arithmetic (tanh = +-1, GELU(u) = u or 0, their derivatives 0 and 1 or 0), as
/// libm does on the CPU. A GPU's tanh built from exponentials would give inf / inf = NaN here.
fn activations_saturate_at_large_inputs(backend: &mut dyn LayerOps) {
    let u = [
        -3.0e38, -1e20, -1e13, -1e4, -50.0, -10.5, -9.0, 9.0, 10.5, 50.0, 1e4, 1e13, 1e20, 3.0e38,
    ];
    let da = [0.5; 14];
    for kind in Activation::ALL {
        let mut a = vec![0.0; u.len()];
        forward::activation(kind, &u, &mut a);
        let mut du = vec![0.0; u.len()];
        backward::activation(kind, &u, &a, &da, &mut du);
        let got_a = backend.activation_forward(kind, &u);
        let got_du = backend.activation_backward(kind, &u, &da);
        for (what, got, want) in [("forward", &got_a, &a), ("backward", &got_du, &du)] {
            for ((g, w), x) in got.iter().zip(want.iter()).zip(u) {
                assert!(
                    g.is_finite() && (g - w).abs() <= backend.tolerance() * w.abs().max(1.0),
                    "{}: {kind:?} {what} at {x:e}: {g:e}, exact {w:e}",
                    backend.name()
                );
            }
        }
    }
}

macro_rules! for_every_layer_backend {
    ($($test:ident),* $(,)?) => {
        mod cpu_f32 {
            $( #[test] fn $test() { super::$test(&mut super::CpuF32) } )*
        }
        mod gpu {
            $( #[test] fn $test() { if let Some(mut gpu) = super::Gpu::new() { super::$test(&mut gpu) } } )*
        }
    };
}

for_every_layer_backend!(
    linear_matches_reference,
    activations_match_reference,
    activations_saturate_at_large_inputs
);

#[test]
fn gpu_shape_errors_are_caught_before_dispatch() {
    let Some(gpu) = Gpu::new() else { return };
    let small = gpu.context.zeroed_buffer("small", 4);
    let dims = LinearDims {
        rows: 10,
        fan_in: 3,
        fan_out: 2,
        weight_offset: 0,
        bias_offset: 6,
        x_offset: 0,
    };
    let mut recorder = Recorder::new();
    let error = gpu
        .ops
        .linear_forward(&mut recorder, dims, &small, &small, &small)
        .unwrap_err();
    assert_eq!(recorder.dispatch_count(), 0, "nothing was recorded");
    assert!(error.to_string().contains("input holds 4 values"), "{error}");
}

#[test]
fn gpu_validation_errors_surface_as_typed_errors() {
    let Some(gpu) = Gpu::new() else { return };
    // A mapped-at-creation buffer whose size is not a multiple of 4 is a WebGPU validation error.
    let _bad = gpu.context.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("invalid"),
        size: 3,
        usage: wgpu::BufferUsages::STORAGE,
        mapped_at_creation: true,
    });
    let good = gpu.context.storage_buffer("good", &[1.0, 2.0]);
    let error = pollster::block_on(read_f32(&gpu.context, &good, 2)).unwrap_err();
    assert!(matches!(error, gradlab::gpu::GpuError::Validation(_)), "{error}");
}
