// Parameter gradients of one linear layer: dW[o, k] += sum_i dy[i, o] * x[i, k] and
// db[o] += sum_i dy[i, o]. The vec4 kernel: rows of x and dy hold whole, aligned vec4s (fan_in,
// x_offset and fan_out multiples of 4); linear_parameter_gradient_scalar.wgsl takes every other
// shape.
//
// Each invocation holds a block of 4 outputs x 8 inputs in registers and adds rows in order onto
// what `grads` holds, as the CPU does, so accumulating micro-batches adds in the same sequence as
// the full batch. Every invocation also sums the bias from the dy it loads anyway (a vec4 add
// per row, cheaper than a branch); those of the first input block store it. Measured on SwiftShader (256 rows, 64 -> 64): 4 x 4 blocks 0.92 ms, 4 x 8 0.65 ms,
// 8 x 4 0.70 ms, 8 x 8 0.93 ms (registers spill).

// Each invocation's block is computed in shared/linear_parameter_gradient_block.wgsl,
// which linear_backward.wgsl shares.

@group(0) @binding(1) var<storage, read> x: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> dy: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> grads: array<f32>;

// Small job counts: small workgroups spread them over the adapter's threads.
@compute @workgroup_size(16)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    parameter_gradient_block(id.x);
}
