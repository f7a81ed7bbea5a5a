// PyTorch's clip_grad_norm_: scale by max_norm / (norm + 1e-6) when that is below 1. The squared
// norm was reduced into scalars[slot] just before. Invocation 0 also adds the factor applied
// (at most 1) to scalars[factor_slot], for the step's clipping-factor metric.

@group(0) @binding(1) var<storage, read_write> scalars: array<f32>;
@group(0) @binding(2) var<storage, read_write> grads: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if i >= args.len {
        return;
    }
    let coefficient = args.max_norm / (sqrt(scalars[args.slot]) + 1e-6);
    if i == 0u {
        scalars[args.factor_slot] = scalars[args.factor_slot] + min(coefficient, 1.0);
    }
    if coefficient < 1.0 {
        grads[i] = grads[i] * coefficient;
    }
}
