// The forward of a linear layer whose outputs are whole vec4s (fan_out a multiple of 4) and
// whose inputs are not (any fan_in or x_offset: the first layer of 2-D data): z[i, o] = b[o] +
// sum_k x[i, k] * W[o, k], and a = f(z) unless the activation is the identity.
//
// Each invocation (shared/linear_forward_vec4_out_block.wgsl) computes 8 rows x 4 neighbouring
// outputs and stores each row's four as one vec4 (neighbouring invocations share their rows:
// their input loads are the same addresses).
// Each sum starts at the bias and adds k = 0, 1, ... in order, as the CPU reference and
// linear_forward_scalar.wgsl do. Measured for 2 -> 64 (64 / 256 rows): lavapipe 55-61 / 112-116
// us with the scalar kernel, 33-49 / 83-88 this way; SwiftShader 75 / 281-348 and 50-58 / 172-179.

@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read> params: array<f32>;
@group(0) @binding(3) var<storage, read_write> z: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read_write> a: array<vec4<f32>>;

@compute @workgroup_size(16)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    forward_vec4_out_block(id.x, args.rows, args.x_offset);
}
