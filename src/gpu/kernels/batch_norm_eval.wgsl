// BatchNorm in evaluation mode: the running statistics normalize, then the activation after
// the norm is applied (one dispatch). One invocation per element.

struct BatchNormEvalParams {
    len: u32,
    width: u32,
    gamma_offset: u32,
    beta_offset: u32,
    running_offset: u32,
    eps: f32,
    activation: u32,
    pad0: u32,
}

@group(0) @binding(0) var<uniform> dims: BatchNormEvalParams;
@group(0) @binding(1) var<storage, read> z: array<f32>;
@group(0) @binding(2) var<storage, read> params: array<f32>;
@group(0) @binding(3) var<storage, read> running: array<f32>;
@group(0) @binding(4) var<storage, read_write> a: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let e = id.x;
    if e >= dims.len {
        return;
    }
    let f = e % dims.width;
    let mean = running[dims.running_offset + f];
    let variance = running[dims.running_offset + dims.width + f];
    let x = (z[e] - mean) / sqrt(variance + dims.eps);
    let normed = params[dims.gamma_offset + f] * x + params[dims.beta_offset + f];
    a[e] = activate(dims.activation, normed);
}
