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

struct LinearBackwardParams {
    rows: u32,
    fan_in: u32,
    fan_out: u32,
    weight_offset: u32,
    bias_offset: u32,
    x_offset: u32,
    activation_below: u32,
    pad0: u32,
}

@group(0) @binding(0) var<uniform> p: LinearBackwardParams;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read> dy: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> grads: array<f32>;

// dW[o0..o0 + 4, k]: four values a row of W apart.
fn load_column(at: u32) -> vec4<f32> {
    return vec4<f32>(grads[at], grads[at + p.fan_in], grads[at + 2u * p.fan_in], grads[at + 3u * p.fan_in]);
}

fn store_column(at: u32, sums: vec4<f32>) {
    grads[at] = sums.x;
    grads[at + p.fan_in] = sums.y;
    grads[at + 2u * p.fan_in] = sums.z;
    grads[at + 3u * p.fan_in] = sums.w;
}

@compute @workgroup_size(8)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let output_blocks = p.fan_out / 4u;
    let input_blocks = (p.fan_in + 1u) / 2u;
    if id.x >= output_blocks * input_blocks {
        return;
    }
    let block = id.x / input_blocks;
    let o0 = block * 4u;
    let ka = (id.x % input_blocks) * 2u;
    // With an odd fan_in the last block's second input repeats its first and is not stored.
    let kb = min(ka + 1u, p.fan_in - 1u);
    let ga = p.weight_offset + o0 * p.fan_in + ka;
    let gb = p.weight_offset + o0 * p.fan_in + kb;
    var sa = load_column(ga);
    var sb = load_column(gb);
    let b = p.bias_offset + o0;
    var bias = vec4<f32>(grads[b], grads[b + 1u], grads[b + 2u], grads[b + 3u]);
    for (var i = 0u; i < p.rows; i = i + 1u) {
        let d = dy[i * output_blocks + block];
        let xi = p.x_offset + i * p.fan_in;
        sa = sa + d * x[xi + ka];
        sb = sb + d * x[xi + kb];
        bias = bias + d;
    }
    store_column(ga, sa);
    if kb != ka {
        store_column(gb, sb);
    }
    if ka == 0u {
        grads[b] = bias.x;
        grads[b + 1u] = bias.y;
        grads[b + 2u] = bias.z;
        grads[b + 3u] = bias.w;
    }
}
