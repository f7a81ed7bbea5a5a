// Parameter gradients of a linear layer whose outputs are whole vec4s (fan_out a multiple of 4)
// and whose inputs are not (any fan_in or x_offset: the first layer of 2-D data):
// dW[o, k] += sum_i dy[i, o] * x[i, k] and db[o] += sum_i dy[i, o].
//
// Each invocation holds 4 neighbouring outputs x 2 inputs and loads each row's four dy as one
// vec4 (neighbouring invocations share their outputs: their dy loads are the same addresses).
// It adds rows in order onto what `grads` holds, as the CPU and
// linear_parameter_gradient_scalar.wgsl do, so accumulating micro-batches adds in the same
// sequence as the full batch. The first invocation of each output block stores the bias.
// Measured for 2 -> 64 (64 / 256 rows): lavapipe 50-56 / 111-113 us with the scalar kernel,
// 24-40 / 50-55 this way; SwiftShader 69 / 235-239 and 25 / 74-85.

@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read> dy: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> grads: array<f32>;

// Each invocation's block is computed in shared/linear_parameter_gradient_vec4_out_block.wgsl,
// which first_and_output_parameter_gradients.wgsl shares.

@compute @workgroup_size(8)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    parameter_gradient_vec4_out_block(id.x);
}
