// Element-wise activation forward: a = f(u).
// The activation functions come from shared/activation.wgsl, prepended to this source.

struct ActivationParams {
    len: u32,
    activation: u32,
    pad0: u32,
    pad1: u32,
}

@group(0) @binding(0) var<uniform> p: ActivationParams;
@group(0) @binding(1) var<storage, read> u: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let index = id.x;
    if index >= p.len {
        return;
    }
    out[index] = activate(p.activation, u[index]);
}
