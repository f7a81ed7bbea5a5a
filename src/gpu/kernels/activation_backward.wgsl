// Element-wise activation backward: du = da * f'(u).
// `kind`: 0 ReLU, 1 tanh, 2 GELU (tanh approximation, as the CPU reference).

struct Dims {
    len: u32,
    kind: u32,
    pad0: u32,
    pad1: u32,
}

@group(0) @binding(0) var<uniform> dims: Dims;
@group(0) @binding(1) var<storage, read> u: array<f32>;
@group(0) @binding(2) var<storage, read> upstream: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;

const GELU_C: f32 = 0.7978845608028654;
const GELU_A: f32 = 0.044715;

// tanh that saturates as libm's does. Drivers may compute tanh from exponentials, which gives
// inf / inf = NaN for large |x|; in f32, tanh(x) rounds to +-1 for |x| > 9.01 anyway.
fn saturating_tanh(x: f32) -> f32 {
    return tanh(clamp(x, -10.0, 10.0));
}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let index = id.x;
    if index >= dims.len {
        return;
    }
    let v = u[index];
    let g = upstream[index];
    var d = 0.0;
    switch dims.kind {
        case 0u: { d = select(0.0, 1.0, v > 0.0); }
        case 1u: { let t = saturating_tanh(v); d = 1.0 - t * t; }
        default: {
            let t = saturating_tanh(GELU_C * (v + GELU_A * v * v * v));
            let sech2 = 1.0 - t * t;
            // As the CPU reference: 0 where tanh saturated, not 0 * (v * v overflowing) = NaN.
            var curvature = 0.0;
            if sech2 != 0.0 {
                curvature = 0.5 * v * sech2 * GELU_C * (1.0 + 3.0 * GELU_A * v * v);
            }
            d = 0.5 * (1.0 + t) + curvature;
        }
    }
    out[index] = g * d;
}
