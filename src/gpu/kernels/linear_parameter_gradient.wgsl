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
@group(0) @binding(1) var<storage, read> x: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> dy: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> grads: array<f32>;

fn load4(at: u32) -> vec4<f32> {
    return vec4<f32>(grads[at], grads[at + 1u], grads[at + 2u], grads[at + 3u]);
}

fn store4(at: u32, sums: vec4<f32>) {
    grads[at] = sums.x;
    grads[at + 1u] = sums.y;
    grads[at + 2u] = sums.z;
    grads[at + 3u] = sums.w;
}

// Small job counts: small workgroups spread them over the adapter's threads.
@compute @workgroup_size(16)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let vec4s_per_row = p.fan_in / 4u;
    let input_blocks = (vec4s_per_row + 1u) / 2u;
    if id.x >= (p.fan_out / 4u) * input_blocks {
        return;
    }
    // Neighbouring invocations share their outputs: their dy loads are the same addresses.
    let o0 = (id.x / input_blocks) * 4u;
    let k4a = (id.x % input_blocks) * 2u;
    // With fan_in = 4 (mod 8) the last block's second half repeats its first and is not stored.
    let k4b = min(k4a + 1u, vec4s_per_row - 1u);
    let g0 = p.weight_offset + o0 * p.fan_in + 4u * k4a;
    let g1 = g0 + p.fan_in;
    let g2 = g1 + p.fan_in;
    let g3 = g2 + p.fan_in;
    let second = 4u * (k4b - k4a);
    var s0a = load4(g0);
    var s1a = load4(g1);
    var s2a = load4(g2);
    var s3a = load4(g3);
    var s0b = load4(g0 + second);
    var s1b = load4(g1 + second);
    var s2b = load4(g2 + second);
    var s3b = load4(g3 + second);
    var bias = load4(p.bias_offset + o0);
    let x_base = p.x_offset >> 2u;
    let dy_base = o0 >> 2u;
    let dy_stride = p.fan_out >> 2u;
    for (var i = 0u; i < p.rows; i = i + 1u) {
        let xa = x[x_base + i * vec4s_per_row + k4a];
        let xb = x[x_base + i * vec4s_per_row + k4b];
        let d = dy[dy_base + i * dy_stride];
        s0a = s0a + d.x * xa;
        s1a = s1a + d.y * xa;
        s2a = s2a + d.z * xa;
        s3a = s3a + d.w * xa;
        s0b = s0b + d.x * xb;
        s1b = s1b + d.y * xb;
        s2b = s2b + d.z * xb;
        s3b = s3b + d.w * xb;
        bias = bias + d;
    }
    store4(g0, s0a);
    store4(g1, s1a);
    store4(g2, s2a);
    store4(g3, s3a);
    if k4b != k4a {
        store4(g0 + second, s0b);
        store4(g1 + second, s1b);
        store4(g2 + second, s2b);
        store4(g3 + second, s3b);
    }
    if k4a == 0u {
        store4(p.bias_offset + o0, bias);
    }
}
