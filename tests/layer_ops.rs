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
use gradlab::gpu::kernels::{
    Access, ActivationCode, Kernel, KernelId, LinearBackwardParams, LinearForwardParams, OutputParams,
};
use gradlab::gpu::ops::{GpuOps, Recorder, Submitter};
use gradlab::gpu::readback::read_f32;
use gradlab::gpu::GpuError;
use gradlab::sim::model::Activation;
use gradlab::sim::reference::{backward, forward, linear};
use gradlab::sim::rng::SeededRng;

/// The layer operations a backend offers, in plain vectors, shaped as the engines fuse them:
/// a linear layer with its activation, and a linear layer's backward that also applies the
/// derivative of the activation below to the input gradient.
trait LayerOps {
    fn name(&self) -> &'static str;
    /// Relative tolerance against the f64 reference.
    fn tolerance(&self) -> f64;
    /// Returns (z = x W^T + b, f(z)); with no activation, f(z) is empty.
    #[allow(clippy::too_many_arguments, reason = "a layer's plain inputs")]
    fn linear_forward(
        &mut self,
        x: &[f64],
        rows: usize,
        fan_in: usize,
        w: &[f64],
        b: &[f64],
        fan_out: usize,
        activation: Option<Activation>,
    ) -> (Vec<f64>, Vec<f64>);
    /// Returns (dW + grads_in, db + grads_in, du_below) with `grads` seeded as given
    /// (accumulation); du_below = (dy W) * f'(u_below) when `below` is given, else empty.
    #[allow(
        clippy::too_many_arguments,
        clippy::type_complexity,
        reason = "a layer's plain inputs and three plain vectors"
    )]
    fn linear_backward(
        &mut self,
        x: &[f64],
        rows: usize,
        fan_in: usize,
        w: &[f64],
        fan_out: usize,
        dy: &[f64],
        grads: &[f64],
        below: Option<(Activation, &[f64])>,
    ) -> (Vec<f64>, Vec<f64>, Vec<f64>);
    fn activation_forward(&mut self, kind: Activation, u: &[f64]) -> Vec<f64>;
    /// `da * f'(u)`.
    fn activation_backward(&mut self, kind: Activation, u: &[f64], da: &[f64]) -> Vec<f64>;
}

fn to32(v: &[f64]) -> Vec<f32> {
    v.iter().map(|&x| x as f32).collect()
}

/// f(u) by the reference, or u itself with no activation.
fn activated(activation: Option<Activation>, u: &[f64]) -> Vec<f64> {
    let Some(kind) = activation else { return u.to_vec() };
    let mut a = vec![0.0; u.len()];
    forward::activation(kind, u, &mut a);
    a
}

/// The bits of each value as the GPU holds it (f32), for comparisons bit for bit.
fn f32_bits(v: &[f64]) -> Vec<u32> {
    v.iter().map(|&x| (x as f32).to_bits()).collect()
}

fn to64(v: &[f32]) -> Vec<f64> {
    v.iter().map(|&x| f64::from(x)).collect()
}

/// The reference composition of a fused layer, in any precision the CPU kernels take.
#[allow(clippy::too_many_arguments, reason = "a layer's plain inputs")]
fn reference_forward<T: gradlab::sim::real::Real>(
    x: &[T],
    rows: usize,
    fan_in: usize,
    w: &[T],
    b: &[T],
    fan_out: usize,
    activation: Option<Activation>,
) -> (Vec<T>, Vec<T>) {
    let mut z = vec![T::ZERO; rows * fan_out];
    linear::forward(x, rows, fan_in, w, b, fan_out, &mut z, &mut Vec::new());
    let a = match activation {
        Some(kind) => {
            let mut a = vec![T::ZERO; z.len()];
            forward::activation(kind, &z, &mut a);
            a
        }
        None => Vec::new(),
    };
    (z, a)
}

/// The reference composition of a fused backward: the linear backward, then the activation's.
#[allow(
    clippy::too_many_arguments,
    clippy::type_complexity,
    reason = "a layer's plain inputs"
)]
fn reference_backward<T: gradlab::sim::real::Real>(
    x: &[T],
    rows: usize,
    fan_in: usize,
    w: &[T],
    fan_out: usize,
    dy: &[T],
    grads: &[T],
    below: Option<(Activation, &[T])>,
) -> (Vec<T>, Vec<T>, Vec<T>) {
    let mut g = grads.to_vec();
    let (dw, db) = g.split_at_mut(fan_in * fan_out);
    let mut dx = vec![T::ZERO; rows * fan_in];
    linear::backward(x, rows, fan_in, w, fan_out, dy, dw, db, Some(&mut dx));
    let du = match below {
        Some((kind, u)) => {
            let mut a = vec![T::ZERO; u.len()];
            forward::activation(kind, u, &mut a);
            let mut du = vec![T::ZERO; u.len()];
            backward::activation(kind, u, &a, &dx, &mut du);
            du
        }
        None => Vec::new(),
    };
    (dw.to_vec(), db.to_vec(), du)
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
        activation: Option<Activation>,
    ) -> (Vec<f64>, Vec<f64>) {
        let (z, a) = reference_forward(&to32(x), rows, fan_in, &to32(w), &to32(b), fan_out, activation);
        (to64(&z), to64(&a))
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
        below: Option<(Activation, &[f64])>,
    ) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
        let u = below.map(|(_, u)| to32(u)).unwrap_or_default();
        let below = below.map(|(kind, _)| (kind, u.as_slice()));
        let (dw, db, du) = reference_backward(
            &to32(x),
            rows,
            fan_in,
            &to32(w),
            fan_out,
            &to32(dy),
            &to32(grads),
            below,
        );
        (to64(&dw), to64(&db), to64(&du))
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
                eprintln!("{error}");
                common::record_skip("GPU");
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

/// Class labels as the output kernel reads them (u32).
fn labels_buffer(gpu: &Gpu, labels: &[u32]) -> wgpu::Buffer {
    use wgpu::util::DeviceExt;
    gpu.context
        .device
        .create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("labels"),
            contents: bytemuck::cast_slice(labels),
            usage: wgpu::BufferUsages::STORAGE,
        })
}

fn code(activation: Option<Activation>) -> u32 {
    activation.map_or(ActivationCode::Identity, ActivationCode::from) as u32
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
        activation: Option<Activation>,
    ) -> (Vec<f64>, Vec<f64>) {
        let mut params = w.to_vec();
        params.extend_from_slice(b);
        let x_buf = self.context.storage_buffer("x", &to32(x));
        let p_buf = self.context.storage_buffer("params", &to32(&params));
        let z_buf = self.context.zeroed_buffer("z", rows * fan_out);
        let a_buf = self.context.zeroed_buffer("a", rows * fan_out);
        let params = LinearForwardParams {
            rows: rows as u32,
            fan_in: fan_in as u32,
            fan_out: fan_out as u32,
            weight_offset: 0,
            bias_offset: (fan_in * fan_out) as u32,
            x_offset: 0,
            activation: code(activation),
            pad0: 0,
        };
        self.run(|e| {
            self.ops
                .linear_forward(e, params, &x_buf, &p_buf, &z_buf, &a_buf)
                .unwrap()
        });
        let a = match activation {
            Some(_) => self.read(&a_buf, rows * fan_out),
            None => Vec::new(),
        };
        (self.read(&z_buf, rows * fan_out), a)
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
        below: Option<(Activation, &[f64])>,
    ) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
        let x_buf = self.context.storage_buffer("x", &to32(x));
        let w_buf = self.context.storage_buffer("params", &to32(w));
        let dy_buf = self.context.storage_buffer("dy", &to32(dy));
        let g_buf = self.context.storage_buffer("grads", &to32(grads));
        let u_buf = self
            .context
            .storage_buffer("u below", &to32(below.map_or(&[0.0][..], |(_, u)| u)));
        let du_buf = self.context.zeroed_buffer("du below", rows * fan_in);
        let params = LinearBackwardParams {
            rows: rows as u32,
            fan_in: fan_in as u32,
            fan_out: fan_out as u32,
            weight_offset: 0,
            bias_offset: (fan_in * fan_out) as u32,
            x_offset: 0,
            activation_below: code(below.map(|(kind, _)| kind)),
            pad0: 0,
        };
        // As the engine records a layer's backward: one dispatch for vec4 shapes, else two.
        self.run(|e| {
            if below.is_some() {
                self.ops
                    .linear_backward(e, params, &x_buf, &dy_buf, &g_buf, &w_buf, &u_buf, &du_buf)
                    .unwrap();
            } else {
                self.ops
                    .linear_parameter_gradient(e, params, &x_buf, &dy_buf, &g_buf)
                    .unwrap();
            }
        });
        let g = self.read(&g_buf, grads.len());
        let (dw, db) = g.split_at(fan_in * fan_out);
        let du = match below {
            Some(_) => self.read(&du_buf, rows * fan_in),
            None => Vec::new(),
        };
        (dw.to_vec(), db.to_vec(), du)
    }
    /// The GPU applies f only fused into a layer (linear, norm); through a linear layer with
    /// identity weights and zero bias, z = u exactly, so a = f(u) as the fused kernel gives it:
    /// one input and output (the scalar kernel) and four (the vec4 kernel, u padded with zeros),
    /// which must agree bit for bit.
    fn activation_forward(&mut self, kind: Activation, u: &[f64]) -> Vec<f64> {
        let (_, scalar) = self.linear_forward(u, u.len(), 1, &[1.0], &[0.0], 1, Some(kind));
        let mut x = u.to_vec();
        x.resize(u.len().div_ceil(4) * 4, 0.0);
        let identity = identity(4);
        let (_, mut vec4) = self.linear_forward(&x, x.len() / 4, 4, &identity, &[0.0; 4], 4, Some(kind));
        vec4.truncate(u.len());
        assert_eq!(
            f32_bits(&vec4),
            f32_bits(&scalar),
            "{kind:?}: the vec4 forward applies f as the scalar one"
        );
        vec4
    }
    /// The GPU applies f' only inside the linear backward (fused); with W = I and one row its
    /// input gradient is exactly `da * f'(u)` (every other product is an exact zero). A width
    /// that is not whole vec4s takes the scalar kernels, whole vec4s the vec4 kernel (u and da
    /// padded with zeros); they must agree bit for bit.
    fn activation_backward(&mut self, kind: Activation, u: &[f64], da: &[f64]) -> Vec<f64> {
        let through = |gpu: &mut Self, n: usize| {
            let (mut u, mut da) = (u.to_vec(), da.to_vec());
            u.resize(n, 0.0);
            da.resize(n, 0.0);
            let grads = vec![0.0; n * n + n];
            let (_, _, du) = gpu.linear_backward(&vec![0.0; n], 1, n, &identity(n), n, &da, &grads, Some((kind, &u)));
            du
        };
        let n = u.len();
        let mut scalar = through(self, if n.is_multiple_of(4) { n + 1 } else { n });
        let mut vec4 = through(self, n.div_ceil(4) * 4);
        scalar.truncate(n);
        vec4.truncate(n);
        assert_eq!(
            f32_bits(&vec4),
            f32_bits(&scalar),
            "{kind:?}: the vec4 backward applies f' as the scalar one"
        );
        vec4
    }
}

/// The n x n identity, row-major.
fn identity(n: usize) -> Vec<f64> {
    let mut w = vec![0.0; n * n];
    for i in 0..n {
        w[i * n + i] = 1.0;
    }
    w
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

/// Shapes with every remainder modulo the kernels' blocks of 4, the canonical layers among them;
/// those whose widths are multiples of 4 take the GPU's vec4 kernels (13 and 20 rows: blocks of
/// 8 rows past the last row there too; 12 inputs: a block of 8 inputs half past the last), the
/// others its scalar kernels (64 -> 3: vec4 forward, scalar backward).
const SHAPES: [(usize, usize, usize); 9] = [
    (1, 1, 1),
    (20, 12, 8),
    (13, 8, 12),
    (7, 2, 5),
    (64, 64, 3),
    (33, 17, 64),
    (5, 9, 6),
    (256, 2, 64),
    (64, 64, 64),
];

fn linear_matches_reference(backend: &mut dyn LayerOps) {
    let mut rng = SeededRng::new(11);
    for (rows, fan_in, fan_out) in SHAPES {
        let x = random_vec(&mut rng, rows * fan_in, 1.0);
        let w = random_vec(&mut rng, fan_out * fan_in, 0.5);
        let b = random_vec(&mut rng, fan_out, 0.5);
        let dy = random_vec(&mut rng, rows * fan_out, 1.0);
        let grads = random_vec(&mut rng, fan_out * fan_in + fan_out, 0.1);
        let u_below = random_vec(&mut rng, rows * fan_in, 1.0);
        for activation in [
            None,
            Some(Activation::Relu),
            Some(Activation::Tanh),
            Some(Activation::Gelu),
        ] {
            let shape = format!("{rows}x{fan_in}->{fan_out} {activation:?}");
            let (z, a) = reference_forward(&x, rows, fan_in, &w, &b, fan_out, activation);
            let (got_z, got_a) = backend.linear_forward(&x, rows, fan_in, &w, &b, fan_out, activation);
            assert_close(backend, &format!("{shape} forward z"), &got_z, &z);
            assert_close(backend, &format!("{shape} forward f(z)"), &got_a, &a);
            let below = activation.map(|kind| (kind, u_below.as_slice()));
            let (dw, db, du) = reference_backward(&x, rows, fan_in, &w, fan_out, &dy, &grads, below);
            let (got_dw, got_db, got_du) = backend.linear_backward(&x, rows, fan_in, &w, fan_out, &dy, &grads, below);
            assert_close(backend, &format!("{shape} dW (accumulated)"), &got_dw, &dw);
            assert_close(backend, &format!("{shape} db (accumulated)"), &got_db, &db);
            assert_close(backend, &format!("{shape} du below"), &got_du, &du);
        }
    }
}

/// Two fused layers, L = sum g * (f(x W1^T + b1) W2^T + b2): each backend's gradients of every
/// parameter and of the input against central differences of L in f64 (the reference forward).
fn fused_layers_match_finite_differences(backend: &mut dyn LayerOps) {
    let (rows, inputs, width, outputs) = (6, 3, 5, 4);
    let mut rng = SeededRng::new(13);
    let x = random_vec(&mut rng, rows * inputs, 1.0);
    let w1 = random_vec(&mut rng, width * inputs, 0.8);
    let b1 = random_vec(&mut rng, width, 0.3);
    let w2 = random_vec(&mut rng, outputs * width, 0.8);
    let b2 = random_vec(&mut rng, outputs, 0.3);
    let g = random_vec(&mut rng, rows * outputs, 1.0);
    for kind in Activation::ALL {
        let loss = |x: &[f64], w1: &[f64], b1: &[f64], w2: &[f64], b2: &[f64]| {
            let (_, a) = reference_forward(x, rows, inputs, w1, b1, width, Some(kind));
            let (y, _) = reference_forward(&a, rows, width, w2, b2, outputs, None);
            y.iter().zip(&g).map(|(y, g)| y * g).sum::<f64>()
        };
        // The engine's order: layer 1 forward (fused activation), layer 2 forward, layer 2
        // backward (f' of layer 1 fused), layer 1 backward with the input gradient (identity).
        let (z1, a1) = backend.linear_forward(&x, rows, inputs, &w1, &b1, width, Some(kind));
        let (dw2, db2, du1) = backend.linear_backward(
            &a1,
            rows,
            width,
            &w2,
            outputs,
            &g,
            &vec![0.0; w2.len() + outputs],
            Some((kind, &z1)),
        );
        // The data has no activation below; ReLU' is 1 at u = 1, so du below is dx itself.
        let ones = vec![1.0; rows * inputs];
        let (dw1, db1, dx) = backend.linear_backward(
            &x,
            rows,
            inputs,
            &w1,
            width,
            &du1,
            &vec![0.0; w1.len() + width],
            Some((Activation::Relu, &ones)),
        );
        let h = 1e-6;
        let numeric = |which: usize, len: usize| -> Vec<f64> {
            (0..len)
                .map(|i| {
                    let mut plus = [x.clone(), w1.clone(), b1.clone(), w2.clone(), b2.clone()];
                    let mut minus = plus.clone();
                    plus[which][i] += h;
                    minus[which][i] -= h;
                    let [xp, w1p, b1p, w2p, b2p] = &plus;
                    let [xm, w1m, b1m, w2m, b2m] = &minus;
                    (loss(xp, w1p, b1p, w2p, b2p) - loss(xm, w1m, b1m, w2m, b2m)) / (2.0 * h)
                })
                .collect()
        };
        for (what, got, which, len) in [
            ("dx", &dx, 0, x.len()),
            ("dW1", &dw1, 1, w1.len()),
            ("db1", &db1, 2, b1.len()),
            ("dW2", &dw2, 3, w2.len()),
            ("db2", &db2, 4, b2.len()),
        ] {
            let error = relative(got, &numeric(which, len));
            assert!(
                error < 1e-4,
                "{}: {kind:?} {what} off finite differences by {error:e}",
                backend.name()
            );
        }
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
    fused_layers_match_finite_differences,
    activations_match_reference,
    activations_saturate_at_large_inputs
);

/// The GPU's output kernel (output layer, softmax, cross-entropy, accuracy, the gradient of
/// the logits and the gradient at the input of the activation below in one dispatch) against
/// the f64 reference, with labels and losses read and written at offsets as a micro-batch does,
/// for 2, 3 and 5 classes, aligned and odd widths, and each activation whose output gives its
/// derivative (the kernel sees only x = f(u)).
#[test]
fn gpu_output_kernel_matches_reference() {
    let Some(gpu) = Gpu::new() else { return };
    let mut rng = SeededRng::new(5);
    let shapes = [(1, 1, 2), (13, 64, 3), (64, 64, 3), (7, 9, 5), (33, 2, 2)];
    let below = [None, Some(Activation::Relu), Some(Activation::Tanh)];
    for ((rows, fan_in, classes), activation) in shapes.into_iter().flat_map(|shape| below.map(|a| (shape, a))) {
        let shape = format!("{rows}x{fan_in}->{classes} after {activation:?}");
        let u = random_vec(&mut rng, rows * fan_in, 1.0);
        let x = activated(activation, &u);
        let w = random_vec(&mut rng, classes * fan_in, 0.5);
        let b = random_vec(&mut rng, classes, 0.5);
        let (label_offset, loss_offset) = (3, 5);
        let labels: Vec<u32> = (0..label_offset + rows)
            .map(|i| ((i * 7 + 1) % classes) as u32)
            .collect();
        let weight = 0.25;
        // The reference: logits, probabilities, row losses, arg-max and weight * (p - onehot).
        let (logits, _) = reference_forward(&x, rows, fan_in, &w, &b, classes, None);
        let row_labels = &labels[label_offset..];
        let mut probs = vec![0.0; rows * classes];
        let mut losses = Vec::new();
        for i in 0..rows {
            let row = i * classes..(i + 1) * classes;
            let mut p = vec![0.0; classes];
            losses.push(forward::softmax_cross_entropy(
                &logits[row.clone()],
                classes,
                &row_labels[i..=i],
                &mut p,
            ));
            probs[row].copy_from_slice(&p);
        }
        let correct: Vec<f64> = (0..rows)
            .map(|i| {
                let row = &logits[i * classes..(i + 1) * classes];
                let best = (0..classes).fold(0, |best, c| if row[c] > row[best] { c } else { best });
                if best == row_labels[i] as usize {
                    1.0
                } else {
                    0.0
                }
            })
            .collect();
        let mut dlogits = vec![0.0; rows * classes];
        backward::softmax_cross_entropy(&probs, classes, row_labels, weight, &mut dlogits);
        // du = (dlogits W) * f'(u), through the reference's linear and activation backward.
        let mut dx = vec![0.0; rows * fan_in];
        let (mut dw, mut db) = (vec![0.0; classes * fan_in], vec![0.0; classes]);
        linear::backward(&x, rows, fan_in, &w, classes, &dlogits, &mut dw, &mut db, Some(&mut dx));
        let du = match activation {
            Some(kind) => {
                let mut du = vec![0.0; dx.len()];
                backward::activation(kind, &u, &x, &dx, &mut du);
                du
            }
            None => dx,
        };

        let mut params = w.clone();
        params.extend_from_slice(&b);
        let x_buf = gpu.context.storage_buffer("x", &to32(&x));
        let p_buf = gpu.context.storage_buffer("params", &to32(&params));
        let l_buf = labels_buffer(&gpu, &labels);
        let probs_buf = gpu.context.zeroed_buffer("probs", rows * classes);
        let loss_buf = gpu.context.zeroed_buffer("row loss", loss_offset + rows);
        let correct_buf = gpu.context.zeroed_buffer("row correct", rows);
        let dlogits_buf = gpu.context.zeroed_buffer("dlogits", rows * classes);
        let du_buf = gpu.context.zeroed_buffer("du", rows * fan_in);
        let params = OutputParams {
            rows: rows as u32,
            classes: classes as u32,
            fan_in: fan_in as u32,
            weight_offset: 0,
            bias_offset: (classes * fan_in) as u32,
            label_offset: label_offset as u32,
            gradient_weight: weight as f32,
            write_gradient: 1,
            loss_offset: loss_offset as u32,
            write_input_gradient: 1,
            activation_below: code(activation),
            ..OutputParams::default()
        };
        gpu.run(|e| {
            gpu.ops
                .output_cross_entropy(
                    e,
                    params,
                    &x_buf,
                    &p_buf,
                    &l_buf,
                    &probs_buf,
                    &loss_buf,
                    &correct_buf,
                    &dlogits_buf,
                    &du_buf,
                )
                .unwrap();
        });
        assert_close(
            &gpu,
            &format!("{shape} probabilities"),
            &gpu.read(&probs_buf, rows * classes),
            &probs,
        );
        let got_losses = gpu.read(&loss_buf, loss_offset + rows);
        assert!(
            got_losses[..loss_offset].iter().all(|&l| l == 0.0),
            "{shape}: losses before the offset untouched"
        );
        assert_close(
            &gpu,
            &format!("{shape} row losses"),
            &got_losses[loss_offset..],
            &losses,
        );
        assert_eq!(gpu.read(&correct_buf, rows), correct, "{shape} correct");
        assert_close(
            &gpu,
            &format!("{shape} dlogits"),
            &gpu.read(&dlogits_buf, rows * classes),
            &dlogits,
        );
        assert_close(
            &gpu,
            &format!("{shape} input gradient"),
            &gpu.read(&du_buf, rows * fan_in),
            &du,
        );
    }
}

/// The output kernel's input gradient takes f' from x = f(u); for ReLU and tanh that is what the
/// input-gradient kernels give from u, bit for bit (x made by the GPU's own fused forward, as
/// the engine makes it), against the scalar kernel (3 classes) and the vec4 kernel (4 classes).
#[test]
fn gpu_output_input_gradient_equals_the_input_gradient_kernel() {
    let Some(mut gpu) = Gpu::new() else { return };
    let mut rng = SeededRng::new(21);
    for (rows, fan_in, classes) in [(13, 9, 3), (16, 8, 4)] {
        for activation in [Activation::Relu, Activation::Tanh] {
            let shape = format!("{rows}x{fan_in}->{classes} after {activation:?}");
            let u = random_vec(&mut rng, rows * fan_in, 2.0);
            let x = gpu.activation_forward(activation, &u);
            let mut params = random_vec(&mut rng, classes * fan_in, 0.5);
            params.extend(random_vec(&mut rng, classes, 0.5));
            let labels: Vec<u32> = (0..rows).map(|i| (i % classes) as u32).collect();
            let x_buf = gpu.context.storage_buffer("x", &to32(&x));
            let u_buf = gpu.context.storage_buffer("u", &to32(&u));
            let p_buf = gpu.context.storage_buffer("params", &to32(&params));
            let l_buf = labels_buffer(&gpu, &labels);
            let probs_buf = gpu.context.zeroed_buffer("probs", rows * classes);
            let loss_buf = gpu.context.zeroed_buffer("row loss", rows);
            let correct_buf = gpu.context.zeroed_buffer("row correct", rows);
            let dlogits_buf = gpu.context.zeroed_buffer("dlogits", rows * classes);
            let fused_buf = gpu.context.zeroed_buffer("du (output kernel)", rows * fan_in);
            let separate_buf = gpu.context.zeroed_buffer("du (input-gradient kernel)", rows * fan_in);
            let output = OutputParams {
                rows: rows as u32,
                classes: classes as u32,
                fan_in: fan_in as u32,
                bias_offset: (classes * fan_in) as u32,
                gradient_weight: 0.125,
                write_gradient: 1,
                write_input_gradient: 1,
                activation_below: code(Some(activation)),
                ..OutputParams::default()
            };
            let backward = LinearBackwardParams {
                rows: rows as u32,
                fan_in: fan_in as u32,
                fan_out: classes as u32,
                bias_offset: (classes * fan_in) as u32,
                activation_below: code(Some(activation)),
                ..LinearBackwardParams::default()
            };
            gpu.run(|e| {
                gpu.ops
                    .output_cross_entropy(
                        e,
                        output,
                        &x_buf,
                        &p_buf,
                        &l_buf,
                        &probs_buf,
                        &loss_buf,
                        &correct_buf,
                        &dlogits_buf,
                        &fused_buf,
                    )
                    .unwrap();
                gpu.ops
                    .linear_input_gradient(e, backward, &dlogits_buf, &p_buf, &u_buf, &separate_buf)
                    .unwrap();
            });
            let fused = gpu.read(&fused_buf, rows * fan_in);
            assert_eq!(fused, gpu.read(&separate_buf, rows * fan_in), "{shape}");
            assert!(
                fused.iter().filter(|&&v| v != 0.0).count() > rows,
                "{shape}: a nonzero input gradient"
            );
        }
    }
}

/// The output kernel's vec4 form (fan_in and weight offset multiples of 4, at most four
/// classes) gives what the scalar form gives, bit for bit: probabilities, row losses, arg-max,
/// logit gradients and the input gradient. The scalar form runs on the same parameters one
/// place further into the buffer (weight offset 1), which is not a vec4 shape.
#[test]
fn gpu_output_vec4_kernel_equals_the_scalar_kernel() {
    let Some(gpu) = Gpu::new() else { return };
    let mut rng = SeededRng::new(34);
    let cases = [
        (64, 64, 3, Some(Activation::Relu)),
        (13, 8, 2, Some(Activation::Tanh)),
        (16, 8, 4, None),
        (5, 4, 1, Some(Activation::Relu)),
    ];
    for (rows, fan_in, classes, activation) in cases {
        let shape = format!("{rows}x{fan_in}->{classes} after {activation:?}");
        let u = random_vec(&mut rng, rows * fan_in, 2.0);
        let x = activated(activation, &u);
        let mut weights = random_vec(&mut rng, classes * fan_in, 0.5);
        weights.extend(random_vec(&mut rng, classes, 0.5));
        let labels: Vec<u32> = (0..rows).map(|i| ((i * 5 + 2) % classes) as u32).collect();
        let x_buf = gpu.context.storage_buffer("x", &to32(&x));
        let l_buf = labels_buffer(&gpu, &labels);
        let mut outputs = Vec::new();
        for weight_offset in [0, 1] {
            let mut params = vec![0.5; weight_offset];
            params.extend_from_slice(&weights);
            let p_buf = gpu.context.storage_buffer("params", &to32(&params));
            let buffers = [
                ("probabilities", rows * classes),
                ("row losses", rows),
                ("row correct", rows),
                ("logit gradient", rows * classes),
                ("input gradient", rows * fan_in),
            ]
            .map(|(what, len)| (what, len, gpu.context.zeroed_buffer(what, len)));
            let params = OutputParams {
                rows: rows as u32,
                classes: classes as u32,
                fan_in: fan_in as u32,
                weight_offset: weight_offset as u32,
                bias_offset: (weight_offset + classes * fan_in) as u32,
                gradient_weight: 0.125,
                write_gradient: 1,
                write_input_gradient: 1,
                activation_below: code(activation),
                ..OutputParams::default()
            };
            let [probs, losses, correct, dlogits, du] = &buffers;
            let mut kernels = Vec::new();
            gpu.run(|e| {
                gpu.ops
                    .output_cross_entropy(
                        e, params, &x_buf, &p_buf, &l_buf, &probs.2, &losses.2, &correct.2, &dlogits.2, &du.2,
                    )
                    .unwrap();
                kernels = gpu.ops.dispatched_kernels(e);
            });
            let expected = if weight_offset == 0 {
                "output_cross_entropy_vec4"
            } else {
                "output_cross_entropy"
            };
            assert_eq!(kernels, [expected], "{shape}, weight offset {weight_offset}");
            outputs.push(buffers.map(|(what, len, buffer)| (what, gpu.read(&buffer, len))));
        }
        for ((what, vec4), (_, scalar)) in outputs[0].iter().zip(&outputs[1]) {
            assert_eq!(f32_bits(vec4), f32_bits(scalar), "{shape}: {what}");
            // One class: its probability is 1, its loss and gradients 0.
            let trivial = classes == 1 && *what != "probabilities" && *what != "row correct";
            assert!(
                trivial || vec4.iter().any(|&v| v != 0.0),
                "{shape}: {what} is not all zero"
            );
        }
    }
}

/// The output kernel writes an input gradient only where the activation's output gives its
/// derivative (not GELU) and only with the logit gradient: anything else is an error before
/// anything is recorded.
#[test]
fn gpu_output_kernel_refuses_an_input_gradient_it_cannot_compute() {
    let Some(gpu) = Gpu::new() else { return };
    let buffer = gpu.context.zeroed_buffer("any", 64);
    let labels = gpu.context.zeroed_buffer("labels", 4);
    let valid = OutputParams {
        rows: 4,
        classes: 2,
        fan_in: 4,
        bias_offset: 8,
        write_gradient: 1,
        write_input_gradient: 1,
        activation_below: ActivationCode::Relu as u32,
        ..OutputParams::default()
    };
    let gelu = OutputParams {
        activation_below: ActivationCode::Gelu as u32,
        ..valid
    };
    let without_logit_gradient = OutputParams {
        write_gradient: 0,
        ..valid
    };
    let unknown = OutputParams {
        activation_below: 7,
        ..valid
    };
    for (params, ok) in [
        (valid, true),
        (gelu, false),
        (without_logit_gradient, false),
        (unknown, false),
    ] {
        let mut recorder = Recorder::new();
        let b = &buffer;
        let result = gpu
            .ops
            .output_cross_entropy(&mut recorder, params, b, b, &labels, b, b, b, b, b);
        assert_eq!(result.is_ok(), ok, "{params:?}: {result:?}");
        assert_eq!(recorder.dispatch_count(), usize::from(ok), "{params:?}");
    }
}

/// A layer whose outputs are whole vec4s and whose inputs are not (the first layer of 2-D data)
/// takes the kernels that store and load its outputs four at a time; they give what the scalar
/// kernels give, bit for bit: the forward's z and f(z) and the accumulated parameter gradients.
/// The scalar kernels run on the same layer with one output more (fan_out not a multiple of 4),
/// whose first outputs are the same sums.
#[test]
fn gpu_vec4_output_kernels_equal_the_scalar_kernels() {
    let Some(gpu) = Gpu::new() else { return };
    let mut rng = SeededRng::new(27);
    for (rows, fan_in, fan_out, activation) in [
        (64, 2, 64, ActivationCode::Relu),
        (13, 3, 8, ActivationCode::Tanh),
        (7, 5, 4, ActivationCode::Identity),
    ] {
        let shape = format!("{rows}x{fan_in}->{fan_out} {activation:?}");
        let x = random_vec(&mut rng, rows * fan_in, 1.0);
        // One output more for the scalar kernels: W and b gain a row, dy a column.
        let wide = fan_out + 1;
        let w = random_vec(&mut rng, wide * fan_in, 0.5);
        let b = random_vec(&mut rng, wide, 0.5);
        let dy_wide = random_vec(&mut rng, rows * wide, 1.0);
        let grads_wide = random_vec(&mut rng, wide * fan_in + wide, 0.1);
        let run = |outputs: usize| {
            let params: Vec<f64> = w[..outputs * fan_in].iter().chain(&b[..outputs]).copied().collect();
            let dy: Vec<f64> = dy_wide.chunks(wide).flat_map(|row| row[..outputs].to_vec()).collect();
            let grads: Vec<f64> = grads_wide[..outputs * fan_in]
                .iter()
                .chain(&grads_wide[wide * fan_in..wide * fan_in + outputs])
                .copied()
                .collect();
            let x_buf = gpu.context.storage_buffer("x", &to32(&x));
            let p_buf = gpu.context.storage_buffer("params", &to32(&params));
            let dy_buf = gpu.context.storage_buffer("dy", &to32(&dy));
            let g_buf = gpu.context.storage_buffer("grads", &to32(&grads));
            let z_buf = gpu.context.zeroed_buffer("z", rows * outputs);
            let a_buf = gpu.context.zeroed_buffer("a", rows * outputs);
            let forward = LinearForwardParams {
                rows: rows as u32,
                fan_in: fan_in as u32,
                fan_out: outputs as u32,
                bias_offset: (fan_in * outputs) as u32,
                activation: activation as u32,
                ..LinearForwardParams::default()
            };
            let backward = LinearBackwardParams {
                rows: rows as u32,
                fan_in: fan_in as u32,
                fan_out: outputs as u32,
                bias_offset: (fan_in * outputs) as u32,
                ..LinearBackwardParams::default()
            };
            let mut recorder = Recorder::new();
            gpu.ops
                .linear_forward(&mut recorder, forward, &x_buf, &p_buf, &z_buf, &a_buf)
                .unwrap();
            gpu.ops
                .linear_parameter_gradient(&mut recorder, backward, &x_buf, &dy_buf, &g_buf)
                .unwrap();
            let expected = if outputs == fan_out {
                ["linear_forward_vec4_out", "linear_parameter_gradient_vec4_out"]
            } else {
                ["linear_forward_scalar", "linear_parameter_gradient_scalar"]
            };
            assert_eq!(
                gpu.ops.dispatched_kernels(&recorder),
                expected,
                "{shape}, {outputs} outputs"
            );
            Submitter::new().submit(&gpu.context, &gpu.ops, recorder);
            let z = gpu.read(&z_buf, rows * outputs);
            let a = gpu.read(&a_buf, rows * outputs);
            let g = gpu.read(&g_buf, grads.len());
            let (dw, db) = g.split_at(outputs * fan_in);
            // The first fan_out outputs of every row, and of W's rows and b.
            let first =
                |v: &[f64]| -> Vec<u32> { v.chunks(outputs).flat_map(|row| f32_bits(&row[..fan_out])).collect() };
            (
                first(&z),
                first(&a),
                f32_bits(&dw[..fan_out * fan_in]),
                f32_bits(&db[..fan_out]),
            )
        };
        let (vec4, scalar) = (run(fan_out), run(wide));
        assert_eq!(vec4.0, scalar.0, "{shape}: z");
        assert_eq!(vec4.1, scalar.1, "{shape}: f(z)");
        assert_eq!(vec4.2, scalar.2, "{shape}: dW");
        assert_eq!(vec4.3, scalar.3, "{shape}: db");
        assert!(vec4.0.iter().any(|&v| v != 0), "{shape}: the forward wrote its outputs");
    }
}

/// A micro-batch after the first reads the data from an offset (`x_offset`): the vec4 and
/// scalar kernels give the same numbers as for the same rows at offset 0, bit for bit.
#[test]
fn gpu_linear_kernels_read_inputs_at_an_offset() {
    let Some(gpu) = Gpu::new() else { return };
    let mut rng = SeededRng::new(9);
    // (rows, fan_in, fan_out, rows before): 8 x 4 = 32 values before (vec4 kernels), 3 x 6 = 18
    // (scalar kernels), 5 x 3 = 15 (the kernels for vec4 outputs of inputs of any count).
    for (rows, fan_in, fan_out, before) in [(12, 8, 8, 4), (9, 6, 5, 3), (11, 3, 8, 5)] {
        let x = random_vec(&mut rng, (before + rows) * fan_in, 1.0);
        let mut params = random_vec(&mut rng, fan_out * fan_in + fan_out, 0.5);
        params.extend(random_vec(&mut rng, 4 - params.len() % 4, 0.0));
        let dy = random_vec(&mut rng, rows * fan_out, 1.0);
        let run = |x: &[f64], x_offset: usize| {
            let x_buf = gpu.context.storage_buffer("x", &to32(x));
            let p_buf = gpu.context.storage_buffer("params", &to32(&params));
            let dy_buf = gpu.context.storage_buffer("dy", &to32(&dy));
            let z_buf = gpu.context.zeroed_buffer("z", rows * fan_out);
            let a_buf = gpu.context.zeroed_buffer("a", rows * fan_out);
            let g_buf = gpu.context.zeroed_buffer("grads", params.len());
            let forward = LinearForwardParams {
                rows: rows as u32,
                fan_in: fan_in as u32,
                fan_out: fan_out as u32,
                bias_offset: (fan_in * fan_out) as u32,
                x_offset: x_offset as u32,
                activation: ActivationCode::Relu as u32,
                ..LinearForwardParams::default()
            };
            let backward = LinearBackwardParams {
                rows: rows as u32,
                fan_in: fan_in as u32,
                fan_out: fan_out as u32,
                bias_offset: (fan_in * fan_out) as u32,
                x_offset: x_offset as u32,
                ..LinearBackwardParams::default()
            };
            gpu.run(|e| {
                gpu.ops
                    .linear_forward(e, forward, &x_buf, &p_buf, &z_buf, &a_buf)
                    .unwrap();
                gpu.ops
                    .linear_parameter_gradient(e, backward, &x_buf, &dy_buf, &g_buf)
                    .unwrap();
            });
            (
                gpu.read(&a_buf, rows * fan_out),
                gpu.read(&g_buf, fan_out * fan_in + fan_out),
            )
        };
        let at_offset = run(&x, before * fan_in);
        let alone = run(&x[before * fan_in..], 0);
        assert_eq!(at_offset, alone, "{rows}x{fan_in}->{fan_out} after {before} rows");
        assert!(at_offset.0.iter().any(|&v| v != 0.0), "the forward wrote its outputs");
    }
}

/// The first layer's and the output layer's parameter gradients in one dispatch
/// (first_and_output_parameter_gradients.wgsl) are the two separate kernels' numbers bit for
/// bit, where the first layer's outputs are whole vec4s and its inputs are not (2 inputs as the
/// Lab's data; data at an offset, as a later micro-batch reads it) and the output layer has at
/// most four classes over a width that is a multiple of 4; other shapes take the two kernels.
/// Parameters between the two layers (a hidden layer's) are left as they were.
#[test]
fn gpu_first_and_output_parameter_gradients_equal_the_two_kernels() {
    let Some(gpu) = Gpu::new() else { return };
    let mut rng = SeededRng::new(31);
    // (rows, fan_in, first layer's width, output layer's fan_in, classes, rows before, dispatches)
    for (rows, fan_in, first_width, width, classes, before, dispatches) in [
        (64, 2, 64, 64, 3, 0, 1),
        (13, 3, 8, 12, 2, 2, 1),
        (9, 5, 4, 8, 4, 1, 1),
        (8, 2, 8, 8, 1, 0, 1),
        (7, 2, 6, 8, 3, 0, 2),
        (5, 4, 8, 8, 3, 0, 2),
        (6, 2, 8, 8, 5, 0, 2),
    ] {
        let shape = format!("{rows}x{fan_in}->{first_width}, {width}->{classes}, after {before} rows");
        let first_count = first_width * fan_in + first_width;
        let between = 12;
        let output_weight = first_count + between;
        let parameter_count = output_weight + classes * width + classes;
        let x = random_vec(&mut rng, (before + rows) * fan_in, 1.0);
        let dy = random_vec(&mut rng, rows * first_width, 1.0);
        let a_top = random_vec(&mut rng, rows * width, 1.0);
        let dlogits = random_vec(&mut rng, rows * classes, 0.5);
        let grads = random_vec(&mut rng, parameter_count, 0.1);
        let first = LinearBackwardParams {
            rows: rows as u32,
            fan_in: fan_in as u32,
            fan_out: first_width as u32,
            weight_offset: 0,
            bias_offset: (first_width * fan_in) as u32,
            x_offset: (before * fan_in) as u32,
            ..LinearBackwardParams::default()
        };
        let output = LinearBackwardParams {
            rows: rows as u32,
            fan_in: width as u32,
            fan_out: classes as u32,
            weight_offset: output_weight as u32,
            bias_offset: (output_weight + classes * width) as u32,
            ..LinearBackwardParams::default()
        };
        let run = |together: bool| {
            let x_buf = gpu.context.storage_buffer("x", &to32(&x));
            let dy_buf = gpu.context.storage_buffer("dy", &to32(&dy));
            let a_buf = gpu.context.storage_buffer("a top", &to32(&a_top));
            let dl_buf = gpu.context.storage_buffer("dlogits", &to32(&dlogits));
            let g_buf = gpu.context.storage_buffer("grads", &to32(&grads));
            let mut recorded = Vec::new();
            gpu.run(|e| {
                if together {
                    gpu.ops
                        .first_and_output_parameter_gradients(
                            e, first, output, &x_buf, &dy_buf, &a_buf, &dl_buf, &g_buf,
                        )
                        .unwrap();
                } else {
                    gpu.ops
                        .linear_parameter_gradient(e, output, &a_buf, &dl_buf, &g_buf)
                        .unwrap();
                    gpu.ops
                        .linear_parameter_gradient(e, first, &x_buf, &dy_buf, &g_buf)
                        .unwrap();
                }
                recorded = gpu.ops.dispatched_kernels(e);
            });
            (gpu.read(&g_buf, parameter_count), recorded)
        };
        let (one, one_dispatches) = run(true);
        let (two, _) = run(false);
        let before_grads = to64(&to32(&grads));
        assert_eq!(
            one_dispatches.len(),
            dispatches,
            "{shape}: dispatches {one_dispatches:?}"
        );
        if dispatches == 1 {
            assert_eq!(one_dispatches, ["first_and_output_parameter_gradients"], "{shape}");
        }
        assert_eq!(f32_bits(&one), f32_bits(&two), "{shape}: parameter gradients");
        assert_eq!(
            one[first_count..output_weight],
            before_grads[first_count..output_weight],
            "{shape}: the parameters between the two layers are untouched"
        );
        for (what, range) in [
            ("first layer", 0..first_count),
            ("output layer", output_weight..parameter_count),
        ] {
            let changed = range.clone().filter(|&i| one[i] != before_grads[i]).count();
            assert_eq!(
                changed,
                range.len(),
                "{shape}: every gradient of the {what} was added to"
            );
        }
    }
}

/// The last backward dispatch of one micro-batch and the first layer's forward of the next in
/// one dispatch (first_and_output_gradients_and_forward.wgsl) give the separate kernels'
/// gradients, z and a bit for bit (next micro-batches of the same and of fewer rows, each at its
/// offset in the data); where the forward would write what the gradients read (the top hidden
/// layer is the first), reads other data or is another layer, the two are recorded apart.
#[test]
fn gpu_first_and_output_gradients_with_the_next_forward_equal_the_separate_kernels() {
    use gradlab::gpu::kernels::FirstAndOutputGradients;
    let Some(gpu) = Gpu::new() else { return };
    let mut rng = SeededRng::new(53);
    // (rows, next rows, fan_in, first layer's width, classes, how the forward is set up, kernels)
    let one = &["first_and_output_gradients_and_forward"][..];
    let apart = &["first_and_output_parameter_gradients", "linear_forward_vec4_out"][..];
    for (rows, next_rows, fan_in, width, classes, setup, expected) in [
        (64, 64, 2, 64, 3, "fits", one),
        (13, 11, 3, 8, 2, "fits", one),
        (9, 9, 2, 4, 4, "fits", one),
        (8, 8, 2, 8, 3, "top is first", apart),
        (8, 8, 2, 8, 3, "other data", apart),
        (8, 8, 2, 8, 3, "other layer", apart),
    ] {
        let shape = format!("{rows} then {next_rows} rows, {fan_in}->{width}, {width}->{classes}, {setup}");
        let first_count = width * fan_in + width;
        let output_weight = first_count + 20;
        let parameter_count = output_weight + classes * width + classes;
        let x = random_vec(&mut rng, (rows + next_rows) * fan_in, 1.0);
        let dy = random_vec(&mut rng, rows * width, 1.0);
        let a_top = random_vec(&mut rng, rows.max(next_rows) * width, 1.0);
        let dlogits = random_vec(&mut rng, rows * classes, 0.5);
        let grads = random_vec(&mut rng, parameter_count, 0.1);
        let parameters = random_vec(&mut rng, parameter_count, 0.5);
        let first = LinearBackwardParams {
            rows: rows as u32,
            fan_in: fan_in as u32,
            fan_out: width as u32,
            weight_offset: 0,
            bias_offset: (width * fan_in) as u32,
            ..LinearBackwardParams::default()
        };
        let output = LinearBackwardParams {
            rows: rows as u32,
            fan_in: width as u32,
            fan_out: classes as u32,
            weight_offset: output_weight as u32,
            bias_offset: (output_weight + classes * width) as u32,
            ..LinearBackwardParams::default()
        };
        // "other layer": the forward reads weights and biases that are not the first layer's.
        let other_layer = if setup == "other layer" { first_count } else { 0 };
        let forward = LinearForwardParams {
            rows: next_rows as u32,
            fan_in: fan_in as u32,
            fan_out: width as u32,
            weight_offset: other_layer as u32,
            bias_offset: (other_layer + width * fan_in) as u32,
            x_offset: (rows * fan_in) as u32,
            activation: ActivationCode::Relu as u32,
            pad0: 0,
        };
        let run = |together: bool| {
            let buffer = |label, values: &[f64]| gpu.context.storage_buffer(label, &to32(values));
            let x_buf = buffer("x", &x);
            let other_x = buffer("other x", &x);
            let dy_buf = buffer("dy", &dy);
            let a_top_buf = buffer("a top", &a_top);
            let gradients = FirstAndOutputGradients {
                first,
                output,
                x: x_buf.clone(),
                dy: dy_buf.clone(),
                a_top: a_top_buf.clone(),
                dlogits: buffer("dlogits", &dlogits),
                grads: buffer("grads", &grads),
            };
            let p_buf = buffer("parameters", &parameters);
            let z_buf = gpu.context.zeroed_buffer("z", next_rows * width);
            let a_buf = if setup == "top is first" {
                a_top_buf.clone()
            } else {
                gpu.context.zeroed_buffer("a", next_rows * width)
            };
            let forward_x = if setup == "other data" { &other_x } else { &x_buf };
            let mut recorded = Vec::new();
            gpu.run(|e| {
                if together {
                    gpu.ops
                        .first_and_output_gradients_then_forward(
                            e, &gradients, forward, forward_x, &p_buf, &z_buf, &a_buf,
                        )
                        .unwrap();
                } else {
                    gradients.record(&gpu.ops, e).unwrap();
                    gpu.ops
                        .linear_forward(e, forward, forward_x, &p_buf, &z_buf, &a_buf)
                        .unwrap();
                }
                recorded = gpu.ops.dispatched_kernels(e);
            });
            let n = next_rows * width;
            let read = |b| f32_bits(&gpu.read(b, n));
            (
                f32_bits(&gpu.read(&gradients.grads, parameter_count)),
                read(&z_buf),
                read(&a_buf),
                recorded,
            )
        };
        let (g1, z1, a1, recorded) = run(true);
        let (g2, z2, a2, recorded_apart) = run(false);
        assert_eq!(recorded, expected, "{shape}");
        assert_eq!(recorded_apart, apart, "{shape}");
        assert_eq!(g1, g2, "{shape}: parameter gradients");
        assert_eq!(z1, z2, "{shape}: z");
        assert_eq!(a1, a2, "{shape}: a");
        // The data of the next micro-batch, not of this one, went into the forward.
        let (p32, x32) = (to64(&to32(&parameters)), to64(&to32(&x)));
        let (w, b) = p32[other_layer..other_layer + first_count].split_at(width * fan_in);
        let (z_want, a_want) = reference_forward(
            &x32[rows * fan_in..],
            next_rows,
            fan_in,
            w,
            b,
            width,
            Some(Activation::Relu),
        );
        let values = |bits: &[u32]| bits.iter().map(|&v| f64::from(f32::from_bits(v))).collect::<Vec<_>>();
        for (what, got, want) in [("z", values(&z1), z_want), ("a", values(&a1), a_want)] {
            let worst = got.iter().zip(&want).map(|(g, w)| (g - w).abs()).fold(0.0, f64::max);
            assert!(worst < 1e-5, "{shape}: {what} against the reference, worst {worst}");
        }
        let before = f32_bits(&grads);
        let changed = (0..first_count)
            .chain(output_weight..parameter_count)
            .filter(|&i| g1[i] != before[i])
            .count();
        assert_eq!(
            changed,
            first_count + classes * width + classes,
            "{shape}: every gradient was added to"
        );
    }
}

/// A training pass's top hidden layer and the output layer in one dispatch
/// (top_layer_and_output.wgsl) give what linear_forward.wgsl and output_cross_entropy_vec4.wgsl
/// give apart, bit for bit: the activations, row losses (at an offset), logit gradients and the
/// gradient at the top layer's activation input, for rows that fill and that do not fill a
/// workgroup's 8 (fewer than 8 in all, too), inputs at an offset, 1 to 4 classes, widths 4 to 64
/// and ReLU and tanh; nothing is written past the last row. Shapes and passes the kernel does
/// not take are refused before anything is recorded.
#[test]
fn gpu_top_layer_and_output_equal_the_separate_kernels() {
    let Some(gpu) = Gpu::new() else { return };
    let mut rng = SeededRng::new(61);
    // Every buffer written has a tail of 8 rows past the last, holding a value no pass writes.
    const TAIL: usize = 8;
    const UNWRITTEN: f32 = -7.0;
    let value = |bits: &u32| f32::from_bits(*bits);
    // (rows, fan_in, width, classes, activation, the row of the data the pass starts at)
    for (rows, fan_in, width, classes, activation, first_row) in [
        (64, 64, 64, 3, Activation::Relu, 0),
        (13, 8, 32, 2, Activation::Tanh, 5),
        (9, 4, 4, 4, Activation::Relu, 0),
        (70, 16, 64, 3, Activation::Relu, 2),
        (5, 12, 48, 2, Activation::Tanh, 1),
        (16, 4, 12, 1, Activation::Relu, 0),
    ] {
        let shape = format!("{rows} rows from {first_row}, {fan_in}->{width} {activation:?}, {width}->{classes}");
        let data_rows = first_row + rows;
        let x = random_vec(&mut rng, data_rows * fan_in, 1.0);
        let top_weight = 8;
        let output_weight = top_weight + width * fan_in + width + 4;
        let parameter_count = output_weight + classes * width + classes;
        let parameters = random_vec(&mut rng, parameter_count, 0.5);
        let labels: Vec<u32> = (0..data_rows).map(|i| ((i * 5 + 2) % classes) as u32).collect();
        let loss_offset = 3;
        let top = LinearForwardParams {
            rows: rows as u32,
            fan_in: fan_in as u32,
            fan_out: width as u32,
            weight_offset: top_weight as u32,
            bias_offset: (top_weight + width * fan_in) as u32,
            x_offset: (first_row * fan_in) as u32,
            activation: ActivationCode::from(activation) as u32,
            pad0: 0,
        };
        let output = OutputParams {
            rows: rows as u32,
            classes: classes as u32,
            fan_in: width as u32,
            weight_offset: output_weight as u32,
            bias_offset: (output_weight + classes * width) as u32,
            label_offset: first_row as u32,
            gradient_weight: 1.0 / 64.0,
            write_gradient: 1,
            loss_offset: loss_offset as u32,
            write_input_gradient: 1,
            activation_below: top.activation,
            ..OutputParams::default()
        };
        assert!(GpuOps::fuses_top_layer_and_output(&top, &output), "{shape}");
        // (values written, values per row) of a, the row losses, dlogits and du.
        let written = [
            (rows * width, width),
            (loss_offset + rows, 1),
            (rows * classes, classes),
            (rows * width, width),
        ];
        let run = |together: bool| {
            let buffer = |label, values: &[f64]| gpu.context.storage_buffer(label, &to32(values));
            let with_tail = |label, (len, per_row): (usize, usize)| {
                gpu.context
                    .storage_buffer(label, &vec![UNWRITTEN; len + TAIL * per_row])
            };
            let x_buf = buffer("x", &x);
            let p_buf = buffer("parameters", &parameters);
            let l_buf = labels_buffer(&gpu, &labels);
            let z_buf = gpu.context.zeroed_buffer("z", rows * width);
            let probs_buf = gpu.context.zeroed_buffer("probs", rows * classes);
            let correct_buf = gpu.context.zeroed_buffer("row correct", rows);
            let a_buf = with_tail("a", written[0]);
            let loss_buf = with_tail("row loss", written[1]);
            let dlogits_buf = with_tail("dlogits", written[2]);
            let du_buf = with_tail("du", written[3]);
            let mut recorded = Vec::new();
            gpu.run(|e| {
                if together {
                    gpu.ops
                        .top_layer_and_output(
                            e,
                            top,
                            output,
                            &x_buf,
                            &p_buf,
                            &l_buf,
                            &a_buf,
                            &loss_buf,
                            &dlogits_buf,
                            &du_buf,
                        )
                        .unwrap();
                } else {
                    gpu.ops.linear_forward(e, top, &x_buf, &p_buf, &z_buf, &a_buf).unwrap();
                    gpu.ops
                        .output_cross_entropy(
                            e,
                            output,
                            &a_buf,
                            &p_buf,
                            &l_buf,
                            &probs_buf,
                            &loss_buf,
                            &correct_buf,
                            &dlogits_buf,
                            &du_buf,
                        )
                        .unwrap();
                }
                recorded = gpu.ops.dispatched_kernels(e);
            });
            let read = |b, (len, per_row): (usize, usize)| f32_bits(&gpu.read(b, len + TAIL * per_row));
            (
                [
                    read(&a_buf, written[0]),
                    read(&loss_buf, written[1]),
                    read(&dlogits_buf, written[2]),
                    read(&du_buf, written[3]),
                ],
                recorded,
            )
        };
        let (together, recorded) = run(true);
        let (apart, recorded_apart) = run(false);
        assert_eq!(recorded, ["top_layer_and_output"], "{shape}");
        assert_eq!(
            recorded_apart,
            ["linear_forward", "output_cross_entropy_vec4"],
            "{shape}"
        );
        let names = ["a", "row losses", "logit gradients", "input gradient"];
        for ((what, (one, two)), (len, _)) in names.into_iter().zip(together.iter().zip(&apart)).zip(written) {
            assert_eq!(one, two, "{shape}: {what}");
            assert!(
                one[len..].iter().all(|v| value(v) == UNWRITTEN),
                "{shape}: {what} past the last row"
            );
        }
        // The activations are the reference's (the rest follows from them as the separate
        // kernels' tests check), and every row's loss was written, none before the offset.
        let p32 = to64(&to32(&parameters));
        let (w, b) = p32[top_weight..top_weight + width * fan_in + width].split_at(width * fan_in);
        let x32 = to64(&to32(&x));
        let (_, a_want) = reference_forward(&x32[first_row * fan_in..], rows, fan_in, w, b, width, Some(activation));
        let a_got: Vec<f64> = together[0][..rows * width]
            .iter()
            .map(|v| f64::from(value(v)))
            .collect();
        let worst = a_got
            .iter()
            .zip(&a_want)
            .map(|(g, w)| (g - w).abs())
            .fold(0.0, f64::max);
        assert!(worst < 1e-5, "{shape}: a against the reference, worst {worst}");
        let losses = &together[1];
        assert!(
            losses[..loss_offset].iter().all(|l| value(l) == UNWRITTEN),
            "{shape}: losses before the offset"
        );
        assert!(
            losses[loss_offset..loss_offset + rows]
                .iter()
                .all(|l| value(l) >= 0.0 && value(l).is_finite()),
            "{shape}: every row's loss"
        );
    }
    // What the kernel does not take: too wide, too many classes, inputs or output weights not
    // in vec4s, no rows, an evaluation, a pass that leaves the input gradient to the backward,
    // layers that do not meet, a derivative that needs z, the identity.
    let top = LinearForwardParams {
        rows: 8,
        fan_in: 64,
        fan_out: 64,
        weight_offset: 0,
        bias_offset: 4096,
        activation: ActivationCode::Relu as u32,
        ..LinearForwardParams::default()
    };
    let output = OutputParams {
        rows: 8,
        classes: 3,
        fan_in: 64,
        weight_offset: 4160,
        bias_offset: 4352,
        write_gradient: 1,
        write_input_gradient: 1,
        activation_below: ActivationCode::Relu as u32,
        ..OutputParams::default()
    };
    assert!(GpuOps::fuses_top_layer_and_output(&top, &output));
    let (gelu, identity, tanh) = (
        ActivationCode::Gelu as u32,
        ActivationCode::Identity as u32,
        ActivationCode::Tanh as u32,
    );
    for (what, top, output) in [
        (
            "68 wide",
            LinearForwardParams { fan_out: 68, ..top },
            OutputParams { fan_in: 68, ..output },
        ),
        ("5 classes", top, OutputParams { classes: 5, ..output }),
        ("6 inputs", LinearForwardParams { fan_in: 6, ..top }, output),
        (
            "inputs at an odd offset",
            LinearForwardParams { x_offset: 2, ..top },
            output,
        ),
        (
            "output weights at an odd offset",
            top,
            OutputParams {
                weight_offset: 4161,
                ..output
            },
        ),
        (
            "no rows",
            LinearForwardParams { rows: 0, ..top },
            OutputParams { rows: 0, ..output },
        ),
        (
            "evaluation",
            top,
            OutputParams {
                write_gradient: 0,
                write_input_gradient: 0,
                ..output
            },
        ),
        (
            "no input gradient",
            top,
            OutputParams {
                write_input_gradient: 0,
                ..output
            },
        ),
        ("other rows", top, OutputParams { rows: 7, ..output }),
        ("other width", top, OutputParams { fan_in: 32, ..output }),
        (
            "other activation",
            top,
            OutputParams {
                activation_below: tanh,
                ..output
            },
        ),
        (
            "GELU",
            LinearForwardParams {
                activation: gelu,
                ..top
            },
            OutputParams {
                activation_below: gelu,
                ..output
            },
        ),
        (
            "identity",
            LinearForwardParams {
                activation: identity,
                ..top
            },
            OutputParams {
                activation_below: identity,
                ..output
            },
        ),
    ] {
        assert!(!GpuOps::fuses_top_layer_and_output(&top, &output), "{what}");
        let b = gpu.context.zeroed_buffer("any", 8 * 4 * 1024);
        let labels = labels_buffer(&gpu, &[0; 8]);
        let mut recorder = Recorder::new();
        let refused = gpu
            .ops
            .top_layer_and_output(&mut recorder, top, output, &b, &b, &labels, &b, &b, &b, &b);
        assert!(refused.is_err(), "{what}");
        assert!(gpu.ops.dispatched_kernels(&recorder).is_empty(), "{what}");
    }
}

/// The gradient's reduction with the optimizer step in its parallel half
/// (gradient_norm_and_optimizer.wgsl) gives the partial sums of reduce_partials.wgsl and the
/// parameters and optimizer state of optimizer.wgsl bit for bit, for every optimizer, with and
/// without a reference gradient, over fewer elements than invocations and over several per
/// invocation (4,611 as the canonical network, not a multiple of 256).
#[test]
fn gpu_gradient_norm_with_optimizer_step_equals_the_two_kernels() {
    use gradlab::gpu::kernels::{
        self, GradientNormAndOptimizerParams, OptimizerKind, OptimizerParams, ReduceMode, ReduceParams,
        REDUCE_PARTIALS_COUNT,
    };
    let Some(gpu) = Gpu::new() else { return };
    let mut rng = SeededRng::new(47);
    for len in [100, 256, 4611] {
        for mode in [ReduceMode::SumOfSquares, ReduceMode::Comparison] {
            for kind in [
                OptimizerKind::Sgd,
                OptimizerKind::Momentum,
                OptimizerKind::Adam,
                OptimizerKind::AdamW,
            ] {
                let case = format!("{len} parameters, {mode:?}, {kind:?}");
                let grads = random_vec(&mut rng, len, 1.0);
                let reference = random_vec(&mut rng, len, 1.0);
                let params = random_vec(&mut rng, len, 1.0);
                let first = random_vec(&mut rng, len, 0.1);
                let second: Vec<f64> = random_vec(&mut rng, len, 0.1).iter().map(|v| v.abs()).collect();
                let optimizer = OptimizerParams {
                    len: len as u32,
                    kind: kind as u32,
                    learning_rate: 0.05,
                    weight_decay: 0.01,
                    beta1: 0.9,
                    beta2: 0.999,
                    eps: 1e-8,
                    momentum: 0.9,
                    correction1: 1.0 - 0.9f32.powi(3),
                    correction2: 1.0 - 0.999f32.powi(3),
                    ..OptimizerParams::default()
                };
                let run = |together: bool| {
                    let buffer = |label, values: &[f64]| gpu.context.storage_buffer(label, &to32(values));
                    let (g, r, p) = (
                        buffer("grads", &grads),
                        buffer("reference", &reference),
                        buffer("params", &params),
                    );
                    let (m, v) = (buffer("first", &first), buffer("second", &second));
                    let partials = gpu.context.zeroed_buffer("partials", 4 * REDUCE_PARTIALS_COUNT);
                    let b = if mode == ReduceMode::Comparison { &r } else { &g };
                    let mut recorded = Vec::new();
                    gpu.run(|e| {
                        let count = REDUCE_PARTIALS_COUNT as u32;
                        if together {
                            let fused = GradientNormAndOptimizerParams::new(len, mode, &optimizer);
                            let buffers = [&g, b, &partials, &p, &m, &v];
                            gpu.ops
                                .run(e, &kernels::GRADIENT_NORM_AND_OPTIMIZER, &fused, buffers, count)
                                .unwrap();
                        } else {
                            let reduce = ReduceParams::new(len, mode, 0, false);
                            gpu.ops
                                .run(e, &kernels::REDUCE_PARTIALS, &reduce, [&g, b, &partials], count)
                                .unwrap();
                            gpu.ops
                                .run(e, &kernels::OPTIMIZER, &optimizer, [&g, &p, &m, &v], len as u32)
                                .unwrap();
                        }
                        recorded = gpu.ops.dispatched_kernels(e);
                    });
                    let read = |buffer| f32_bits(&gpu.read(buffer, len));
                    let sums = f32_bits(&gpu.read(&partials, 4 * REDUCE_PARTIALS_COUNT));
                    (sums, read(&p), read(&m), read(&v), recorded)
                };
                let (sums, p, m, v, recorded) = run(true);
                let (sums_apart, p_apart, m_apart, v_apart, recorded_apart) = run(false);
                assert_eq!(recorded, ["gradient_norm_and_optimizer"], "{case}");
                assert_eq!(recorded_apart, ["reduce_partials", "optimizer"], "{case}");
                assert_eq!(sums, sums_apart, "{case}: partial sums");
                assert_eq!(p, p_apart, "{case}: parameters");
                assert_eq!(m, m_apart, "{case}: first moments");
                assert_eq!(v, v_apart, "{case}: second moments");
                // Neither side may pass by leaving everything as it was.
                let before = f32_bits(&params);
                let changed = p.iter().zip(&before).filter(|(a, b)| a != b).count();
                assert_eq!(changed, len, "{case}: every parameter was updated");
                let filled = (0..REDUCE_PARTIALS_COUNT.min(len))
                    .filter(|&t| sums[4 * t] != 0)
                    .count();
                assert_eq!(
                    filled,
                    REDUCE_PARTIALS_COUNT.min(len),
                    "{case}: every used partial holds a sum"
                );
            }
        }
    }
}

/// The one-dispatch backward (linear_backward.wgsl) gives the separate parameter-gradient and
/// input-gradient kernels' numbers bit for bit, in one dispatch, for vec4 shapes (fan_in 12:
/// a last block of one vec4; rows not a multiple of 8; data at an offset, as a later micro-batch
/// reads it; weights after other parameters, as every layer but the first has them); other
/// shapes take the two kernels.
#[test]
fn gpu_one_dispatch_backward_equals_the_two_kernels() {
    let Some(gpu) = Gpu::new() else { return };
    let mut rng = SeededRng::new(12);
    // (rows, fan_in, fan_out, rows before, parameters before, dispatches)
    for (rows, fan_in, fan_out, before, parameters_before, dispatches) in [
        (64, 64, 64, 0, 0, 1),
        (13, 12, 8, 2, 4, 1),
        (9, 8, 4, 1, 8, 1),
        (7, 6, 8, 0, 0, 2),
        (5, 8, 3, 0, 4, 2),
    ] {
        let shape = format!("{rows}x{fan_in}->{fan_out} after {before} rows, {parameters_before} parameters");
        let x = random_vec(&mut rng, (before + rows) * fan_in, 1.0);
        let parameter_count = parameters_before + fan_out * fan_in + fan_out;
        let w = random_vec(&mut rng, parameter_count, 0.5);
        let dy = random_vec(&mut rng, rows * fan_out, 1.0);
        let grads = random_vec(&mut rng, parameter_count, 0.1);
        let u = random_vec(&mut rng, rows * fan_in, 1.0);
        let params = LinearBackwardParams {
            rows: rows as u32,
            fan_in: fan_in as u32,
            fan_out: fan_out as u32,
            weight_offset: parameters_before as u32,
            bias_offset: (parameters_before + fan_in * fan_out) as u32,
            x_offset: (before * fan_in) as u32,
            activation_below: ActivationCode::Tanh as u32,
            ..LinearBackwardParams::default()
        };
        let run = |together: bool| {
            let x_buf = gpu.context.storage_buffer("x", &to32(&x));
            let w_buf = gpu.context.storage_buffer("params", &to32(&w));
            let dy_buf = gpu.context.storage_buffer("dy", &to32(&dy));
            let g_buf = gpu.context.storage_buffer("grads", &to32(&grads));
            let u_buf = gpu.context.storage_buffer("u below", &to32(&u));
            let du_buf = gpu.context.zeroed_buffer("du below", rows * fan_in);
            let mut recorded = 0;
            gpu.run(|e| {
                if together {
                    gpu.ops
                        .linear_backward(e, params, &x_buf, &dy_buf, &g_buf, &w_buf, &u_buf, &du_buf)
                        .unwrap();
                } else {
                    gpu.ops
                        .linear_parameter_gradient(e, params, &x_buf, &dy_buf, &g_buf)
                        .unwrap();
                    gpu.ops
                        .linear_input_gradient(e, params, &dy_buf, &w_buf, &u_buf, &du_buf)
                        .unwrap();
                }
                recorded = e.dispatch_count();
            });
            (
                gpu.read(&g_buf, grads.len()),
                gpu.read(&du_buf, rows * fan_in),
                recorded,
            )
        };
        let (one_grads, one_du, one_dispatches) = run(true);
        let (two_grads, two_du, _) = run(false);
        assert_eq!(one_dispatches, dispatches, "{shape}: dispatches");
        assert_eq!(one_grads, two_grads, "{shape}: parameter gradients");
        assert_eq!(one_du, two_du, "{shape}: input gradient");
        assert_ne!(one_grads, to64(&to32(&grads)), "{shape}: the gradients were added to");
        assert_eq!(
            one_grads[..parameters_before],
            to64(&to32(&grads[..parameters_before])),
            "{shape}: only the layer's own gradients"
        );
        assert!(
            one_du.iter().any(|&v| v != 0.0),
            "{shape}: the input gradient was written"
        );
    }
}

/// A LayerNorm- or GroupNorm-shaped norm layer's backward is one dispatch
/// (norm_backward_within_sets.wgsl): its scale and shift gradients equal the separate
/// parameter-gradient kernel's bit for bit (the same rows in the same order, added onto what the
/// gradients held), and its input gradient matches the formula in f64 and the scalar kernel.
#[test]
fn gpu_norm_backward_within_sets_is_one_dispatch_equal_to_the_separate_kernels() {
    use gradlab::gpu::kernels::{
        NormGradientParams, NormParams, NORM_BACKWARD_INPUT, NORM_BACKWARD_PARAMS_ACROSS_FEATURES,
    };
    let Some(gpu) = Gpu::new() else { return };
    let mut rng = SeededRng::new(21);
    // (rows, width, values per set: the width for LayerNorm, less for GroupNorm, parameters before)
    for (rows, width, len, before) in [
        (64, 64, 64, 0),
        (13, 12, 12, 4),
        (9, 16, 8, 2),
        (3, 8, 4, 1),
        (1, 4, 4, 0),
    ] {
        let shape = format!("{rows} rows x {width}, sets of {len}, {before} parameters before");
        let sets = rows * width / len;
        let dout = random_vec(&mut rng, rows * width, 1.0);
        let xhat = random_vec(&mut rng, rows * width, 1.0);
        let rstd: Vec<f64> = random_vec(&mut rng, sets, 1.0).iter().map(|v| 1.5 + v).collect();
        let mut stats = vec![0.0; 2 * sets];
        stats.extend(&rstd);
        let parameter_count = before + 2 * width + 3;
        let parameters = random_vec(&mut rng, parameter_count, 1.0);
        let grads = random_vec(&mut rng, parameter_count, 0.1);
        let (gamma, beta) = (before, before + width);
        let params = NormParams {
            sets: sets as u32,
            len: len as u32,
            set_stride: len as u32,
            item_stride: 1,
            width: width as u32,
            gamma_offset: gamma as u32,
            beta_offset: beta as u32,
            eps: 1e-5,
            ..NormParams::default()
        };
        let run = |together: bool| {
            let dout_buf = gpu.context.storage_buffer("dout", &to32(&dout));
            let xhat_buf = gpu.context.storage_buffer("xhat", &to32(&xhat));
            let stats_buf = gpu.context.storage_buffer("stats", &to32(&stats));
            let p_buf = gpu.context.storage_buffer("params", &to32(&parameters));
            let g_buf = gpu.context.storage_buffer("grads", &to32(&grads));
            let dz_buf = gpu.context.zeroed_buffer("dz", rows * width);
            let mut recorded = Vec::new();
            gpu.run(|e| {
                if together {
                    gpu.ops
                        .norm_backward(e, params, &dout_buf, &xhat_buf, &stats_buf, &p_buf, &g_buf, &dz_buf)
                        .unwrap();
                } else {
                    let gradient = NormGradientParams {
                        rows: rows as u32,
                        width: width as u32,
                        gamma_offset: gamma as u32,
                        beta_offset: beta as u32,
                    };
                    let kernel = &NORM_BACKWARD_PARAMS_ACROSS_FEATURES;
                    let buffers = [&dout_buf, &xhat_buf, &g_buf];
                    gpu.ops.run(e, kernel, &gradient, buffers, width as u32 / 4).unwrap();
                    let buffers = [&dout_buf, &xhat_buf, &stats_buf, &p_buf, &dz_buf];
                    gpu.ops
                        .run(e, &NORM_BACKWARD_INPUT, &params, buffers, sets as u32)
                        .unwrap();
                }
                recorded = gpu.ops.dispatched_kernels(e);
            });
            (
                gpu.read(&g_buf, parameter_count),
                gpu.read(&dz_buf, rows * width),
                recorded,
            )
        };
        let (one_grads, one_dz, recorded) = run(true);
        let (two_grads, two_dz, _) = run(false);
        assert_eq!(recorded, ["norm_backward_within_sets"], "{shape}");
        assert_eq!(one_grads, two_grads, "{shape}: scale and shift gradients");
        // Only the layer's scale and shift gradients change, each by its rows' sum.
        let grads32 = to64(&to32(&grads));
        assert_eq!(one_grads[..before], grads32[..before], "{shape}: before the layer");
        assert_eq!(
            one_grads[before + 2 * width..],
            grads32[before + 2 * width..],
            "{shape}: after it"
        );
        let column = |f: usize| (0..rows).map(move |i| i * width + f);
        let dgamma: Vec<f64> = (0..width).map(|f| column(f).map(|e| dout[e] * xhat[e]).sum()).collect();
        let dbeta: Vec<f64> = (0..width).map(|f| column(f).map(|e| dout[e]).sum()).collect();
        let added = |at: usize| (at..at + width).map(|i| one_grads[i] - grads32[i]).collect::<Vec<_>>();
        assert!(relative(&added(gamma), &dgamma) < 1e-5, "{shape}: dgamma");
        assert!(relative(&added(beta), &dbeta) < 1e-5, "{shape}: dbeta");
        // dz = rstd / n * (n * g - sum(g) - xhat * sum(g * xhat)), g = dout * gamma, per set.
        let mut want = vec![0.0; rows * width];
        for set in 0..sets {
            let items = set * len..(set + 1) * len;
            let g = |e: usize| dout[e] * parameters[gamma + e % width];
            let sum: f64 = items.clone().map(g).sum();
            let dot: f64 = items.clone().map(|e| g(e) * xhat[e]).sum();
            let n = len as f64;
            for e in items {
                want[e] = rstd[set] / n * (n * g(e) - sum - xhat[e] * dot);
            }
        }
        let scale = want.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        for (e, ((one, two), want)) in one_dz.iter().zip(&two_dz).zip(&want).enumerate() {
            assert!((one - want).abs() <= 1e-5 * scale, "{shape}: dz[{e}] {one} vs {want}");
            assert!(
                (one - two).abs() <= 1e-5 * scale,
                "{shape}: dz[{e}] {one} vs the scalar kernel's {two}"
            );
        }
    }
}

#[test]
fn gpu_shape_errors_are_caught_before_dispatch() {
    let Some(gpu) = Gpu::new() else { return };
    let small = gpu.context.zeroed_buffer("small", 4);
    let params = LinearForwardParams {
        rows: 10,
        fan_in: 3,
        fan_out: 2,
        weight_offset: 0,
        bias_offset: 6,
        ..LinearForwardParams::default()
    };
    let mut recorder = Recorder::new();
    let error = gpu
        .ops
        .linear_forward(&mut recorder, params, &small, &small, &small, &small)
        .unwrap_err();
    assert_eq!(recorder.dispatch_count(), 0, "nothing was recorded");
    // 10 rows x 3 inputs in a buffer of 4 values (16 bytes).
    assert_eq!(
        error,
        GpuError::BufferTooSmall {
            what: "input",
            bytes: 16,
            needed: 4 * 30
        }
    );
    // The one-dispatch backward checks both halves first, also where it falls back to two
    // kernels (fan_in 3): a too-small input gradient records not even the parameter gradients.
    let large = gpu.context.zeroed_buffer("large", 64);
    for fan_in in [4, 3] {
        let params = LinearBackwardParams {
            rows: 4,
            fan_in,
            fan_out: 4,
            bias_offset: 4 * fan_in,
            ..LinearBackwardParams::default()
        };
        let mut recorder = Recorder::new();
        let error = gpu
            .ops
            .linear_backward(&mut recorder, params, &large, &large, &large, &large, &large, &small)
            .unwrap_err();
        assert_eq!(recorder.dispatch_count(), 0, "fan_in {fan_in}: nothing was recorded");
        assert!(
            matches!(
                error,
                GpuError::BufferTooSmall {
                    what: "input gradient",
                    bytes: 16,
                    ..
                }
            ),
            "{error}"
        );
    }
    // More workgroups than a dispatch may have: refused, not left to the device's validation.
    let limit = gpu.context.device.limits().max_compute_workgroups_per_dimension;
    let clip = gradlab::gpu::kernels::ClipParams::default();
    let mut recorder = Recorder::new();
    let kernel = &gradlab::gpu::kernels::CLIP;
    let size = kernel.info.workgroup_size;
    let error = gpu
        .ops
        .run(&mut recorder, kernel, &clip, [&small, &small], (limit + 1) * size)
        .unwrap_err();
    assert_eq!(recorder.dispatch_count(), 0, "nothing was recorded");
    assert_eq!(
        error,
        GpuError::TooManyWorkgroups {
            kernel: "clip",
            workgroups: limit + 1,
            limit
        }
    );
    gpu.ops
        .run(&mut recorder, kernel, &clip, [&small, &small], limit * size)
        .unwrap();
    assert_eq!(recorder.dispatch_count(), 1, "the most workgroups a dispatch may have");
    // A kernel whose id is another kernel's place (one left out of its family's list) is
    // refused: it must never run that other kernel's pipeline.
    let unlisted = Kernel::<gradlab::gpu::kernels::ClipParams, 2>::new(
        KernelId::new(0, 0),
        "clip",
        kernel.info.source,
        size,
        &[Access::ReadWrite, Access::ReadWrite],
    );
    let error = gpu
        .ops
        .run(&mut recorder, &unlisted, &clip, [&small, &small], size)
        .unwrap_err();
    assert_eq!(error, GpuError::UnlistedKernel("clip"));
    assert_eq!(recorder.dispatch_count(), 1, "nothing more was recorded");
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
    assert!(matches!(error, GpuError::Validation(_)), "{error}");
}
