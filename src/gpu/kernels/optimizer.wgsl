// One optimizer update per parameter (shared/optimizer_update.wgsl), one invocation each. A
// step whose gradient norm is recorded takes gradient_norm_and_optimizer.wgsl instead.

struct OptimizerParams {
    len: u32,
    kind: u32,
    learning_rate: f32,
    weight_decay: f32,
    beta1: f32,
    beta2: f32,
    eps: f32,
    momentum: f32,
    correction1: f32,
    correction2: f32,
    pad0: u32,
    pad1: u32,
}

@group(0) @binding(0) var<uniform> dims: OptimizerParams;
@group(0) @binding(1) var<storage, read> grads: array<f32>;
@group(0) @binding(2) var<storage, read_write> params: array<f32>;
@group(0) @binding(3) var<storage, read_write> first: array<f32>;
@group(0) @binding(4) var<storage, read_write> second: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if i >= dims.len {
        return;
    }
    let settings = OptimizerSettings(
        dims.kind,
        dims.learning_rate,
        dims.weight_decay,
        dims.beta1,
        dims.beta2,
        dims.eps,
        dims.momentum,
        dims.correction1,
        dims.correction2,
    );
    update_parameter(i, grads[i], settings);
}
