// norm_backward_params.wgsl for widths that are multiples of 4: four features per invocation
// (shared/norm_parameter_gradient_quad.wgsl). LayerNorm and GroupNorm take
// norm_backward_within_sets.wgsl, which runs the same in its dispatch.

@group(0) @binding(1) var<storage, read> dout: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> xhat: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> grads: array<f32>;

// 4: a 64-wide layer is 16 invocations, and one workgroup runs on one thread of a software adapter.
@compute @workgroup_size(4)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    norm_parameter_gradient_quad(id.x, args.rows, args.width, args.gamma_offset, args.beta_offset);
}
