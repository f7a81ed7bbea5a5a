// PyTorch's clip_grad_norm_: scale by max_norm / (norm + 1e-6) when that is below 1. The squared
// norm was reduced into scalars[slot] just before.

struct Dims {
    len: u32,
    slot: u32,
    max_norm: f32,
    pad0: u32,
}

@group(0) @binding(0) var<uniform> dims: Dims;
@group(0) @binding(1) var<storage, read> scalars: array<f32>;
@group(0) @binding(2) var<storage, read_write> grads: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if i >= dims.len {
        return;
    }
    let coefficient = dims.max_norm / (sqrt(scalars[dims.slot]) + 1e-6);
    if coefficient < 1.0 {
        grads[i] = grads[i] * coefficient;
    }
}
