// The forward of a linear layer whose outputs are whole vec4s (fan_out a multiple of 4) and
// whose inputs are not (any fan_in or x_offset: the first layer of 2-D data): z[i, o] = b[o] +
// sum_k x[i, k] * W[o, k], and a = f(z) unless the activation is the identity.
//
// Each invocation computes 8 rows x 4 neighbouring outputs and stores each row's four as one
// vec4 (neighbouring invocations share their rows: their input loads are the same addresses).
// Each sum starts at the bias and adds k = 0, 1, ... in order, as the CPU reference and
// linear_forward_scalar.wgsl do. Measured for 2 -> 64 (64 / 256 rows): lavapipe 55-61 / 112-116
// us with the scalar kernel, 33-49 / 83-88 this way; SwiftShader 75 / 281-348 and 50-58 / 172-179.

struct LinearForwardParams {
    rows: u32,
    fan_in: u32,
    fan_out: u32,
    weight_offset: u32,
    bias_offset: u32,
    x_offset: u32,
    activation: u32,
    pad0: u32,
}

@group(0) @binding(0) var<uniform> p: LinearForwardParams;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read> params: array<f32>;
@group(0) @binding(3) var<storage, read_write> z: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read_write> a: array<vec4<f32>>;

fn store_row(row: u32, at: u32, sums: vec4<f32>) {
    if row < p.rows {
        z[at] = sums;
        if p.activation != ACTIVATION_IDENTITY {
            let f = p.activation;
            a[at] = vec4<f32>(activate(f, sums.x), activate(f, sums.y), activate(f, sums.z), activate(f, sums.w));
        }
    }
}

@compute @workgroup_size(16)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let output_blocks = p.fan_out / 4u;
    if id.x >= ((p.rows + 7u) / 8u) * output_blocks {
        return;
    }
    let r0 = (id.x / output_blocks) * 8u;
    let block = id.x % output_blocks;
    let o0 = block * 4u;
    // Rows past the edge repeat the last one, so that every load is in bounds; they are not
    // stored.
    let last_row = p.rows - 1u;
    let x0 = p.x_offset + r0 * p.fan_in;
    let x1 = p.x_offset + min(r0 + 1u, last_row) * p.fan_in;
    let x2 = p.x_offset + min(r0 + 2u, last_row) * p.fan_in;
    let x3 = p.x_offset + min(r0 + 3u, last_row) * p.fan_in;
    let x4 = p.x_offset + min(r0 + 4u, last_row) * p.fan_in;
    let x5 = p.x_offset + min(r0 + 5u, last_row) * p.fan_in;
    let x6 = p.x_offset + min(r0 + 6u, last_row) * p.fan_in;
    let x7 = p.x_offset + min(r0 + 7u, last_row) * p.fan_in;
    let w0 = p.weight_offset + o0 * p.fan_in;
    let w1 = w0 + p.fan_in;
    let w2 = w1 + p.fan_in;
    let w3 = w2 + p.fan_in;
    let b = p.bias_offset + o0;
    let bias = vec4<f32>(params[b], params[b + 1u], params[b + 2u], params[b + 3u]);
    var s0 = bias;
    var s1 = bias;
    var s2 = bias;
    var s3 = bias;
    var s4 = bias;
    var s5 = bias;
    var s6 = bias;
    var s7 = bias;
    for (var k = 0u; k < p.fan_in; k = k + 1u) {
        let w = vec4<f32>(params[w0 + k], params[w1 + k], params[w2 + k], params[w3 + k]);
        s0 = s0 + x[x0 + k] * w;
        s1 = s1 + x[x1 + k] * w;
        s2 = s2 + x[x2 + k] * w;
        s3 = s3 + x[x3 + k] * w;
        s4 = s4 + x[x4 + k] * w;
        s5 = s5 + x[x5 + k] * w;
        s6 = s6 + x[x6 + k] * w;
        s7 = s7 + x[x7 + k] * w;
    }
    store_row(r0, r0 * output_blocks + block, s0);
    store_row(r0 + 1u, (r0 + 1u) * output_blocks + block, s1);
    store_row(r0 + 2u, (r0 + 2u) * output_blocks + block, s2);
    store_row(r0 + 3u, (r0 + 3u) * output_blocks + block, s3);
    store_row(r0 + 4u, (r0 + 4u) * output_blocks + block, s4);
    store_row(r0 + 5u, (r0 + 5u) * output_blocks + block, s5);
    store_row(r0 + 6u, (r0 + 6u) * output_blocks + block, s6);
    store_row(r0 + 7u, (r0 + 7u) * output_blocks + block, s7);
}
