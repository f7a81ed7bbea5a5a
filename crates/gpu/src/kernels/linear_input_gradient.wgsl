// The gradient at the input of the activation below one linear layer:
// du[i, k] = (sum_o dy[i, o] * W[o, k]) * f'(u[i, k]), the activation's derivative fused in.
// The vec4 kernel: rows of dy, W and u hold whole, aligned vec4s (fan_in, fan_out and
// weight_offset multiples of 4); linear_input_gradient_scalar.wgsl takes every other shape.
//
// Each invocation holds a block of 8 rows x 8 inputs in registers; each sum adds o = 0, 1, ...
// in order, as the CPU reference does. Measured on SwiftShader (256 rows, 64 -> 64): 4 x 4
// blocks inside the parameter-gradient kernel 1.1 ms, 4 x 4 alone 0.68 ms, 8 x 8 0.50 ms.

// Each invocation's block is computed in shared/linear_input_gradient_block.wgsl,
// which linear_backward.wgsl shares.

@group(0) @binding(1) var<storage, read> dy: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> params: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> u_below: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read_write> du_below: array<vec4<f32>>;

// 32: a 64-row micro-batch of a 64-wide layer is 64 invocations, and one workgroup runs on one
// thread of a software adapter (measured on SwiftShader: 0.26 ms in one workgroup of 64, 0.15 ms
// in two of 32).
@compute @workgroup_size(32)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    input_gradient_block(id.x);
}
