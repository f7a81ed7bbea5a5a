// One optimizer update per parameter (shared/optimizer_update.wgsl), one invocation each, for
// the `len` parameters from `offset`. A step whose gradient norm is recorded takes
// gradient_norm_and_optimizer.wgsl instead.

@group(0) @binding(1) var<storage, read> grads: array<f32>;
@group(0) @binding(2) var<storage, read_write> params: array<f32>;
@group(0) @binding(3) var<storage, read_write> first: array<f32>;
@group(0) @binding(4) var<storage, read_write> second: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    if id.x >= args.len {
        return;
    }
    let i = args.offset + id.x;
    let settings = OptimizerSettings(
        args.kind,
        args.learning_rate,
        args.weight_decay,
        args.beta1,
        args.beta2,
        args.eps,
        args.momentum,
        args.correction1,
        args.correction2,
    );
    update_parameter(i, grads[i], settings);
}
