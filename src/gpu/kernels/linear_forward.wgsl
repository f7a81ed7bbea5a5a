// z[i, o] = b[o] + sum_k x[i, k] * W[o, k], W stored [fan_out, fan_in] row-major inside
// `params`, and a = f(z) unless the activation is the identity (then only z is written).
//
// Each invocation computes a block of 4 rows x 4 outputs, holding 16 sums in registers: every
// weight and input loaded serves four products. Each sum still starts at the bias and adds
// k = 0, 1, ... in order, as the CPU reference does. Measured on SwiftShader, register blocks
// beat both one output per invocation and workgroup tiles with barriers.

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
@group(0) @binding(3) var<storage, read_write> z: array<f32>;
@group(0) @binding(4) var<storage, read_write> a: array<f32>;

fn store_row(row: u32, o0: u32, sums: vec4<f32>) {
    if row >= p.rows {
        return;
    }
    for (var j = 0u; j < 4u; j = j + 1u) {
        let o = o0 + j;
        if o < p.fan_out {
            let index = row * p.fan_out + o;
            z[index] = sums[j];
            if p.activation != ACTIVATION_IDENTITY {
                a[index] = activate(p.activation, sums[j]);
            }
        }
    }
}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let output_blocks = (p.fan_out + 3u) / 4u;
    if id.x >= ((p.rows + 3u) / 4u) * output_blocks {
        return;
    }
    let r0 = (id.x / output_blocks) * 4u;
    let o0 = (id.x % output_blocks) * 4u;
    // Rows and outputs past the edge repeat the last one, so that every load is in bounds and
    // the loop has no branches; their sums are not stored.
    let last_row = p.rows - 1u;
    let last_output = p.fan_out - 1u;
    let x0 = p.x_offset + min(r0, last_row) * p.fan_in;
    let x1 = p.x_offset + min(r0 + 1u, last_row) * p.fan_in;
    let x2 = p.x_offset + min(r0 + 2u, last_row) * p.fan_in;
    let x3 = p.x_offset + min(r0 + 3u, last_row) * p.fan_in;
    let o1 = min(o0 + 1u, last_output);
    let o2 = min(o0 + 2u, last_output);
    let o3 = min(o0 + 3u, last_output);
    let w0 = p.weight_offset + min(o0, last_output) * p.fan_in;
    let w1 = p.weight_offset + o1 * p.fan_in;
    let w2 = p.weight_offset + o2 * p.fan_in;
    let w3 = p.weight_offset + o3 * p.fan_in;
    let bias = vec4<f32>(
        params[p.bias_offset + min(o0, last_output)],
        params[p.bias_offset + o1],
        params[p.bias_offset + o2],
        params[p.bias_offset + o3],
    );
    var s0 = bias;
    var s1 = bias;
    var s2 = bias;
    var s3 = bias;
    for (var k = 0u; k < p.fan_in; k = k + 1u) {
        let w = vec4<f32>(params[w0 + k], params[w1 + k], params[w2 + k], params[w3 + k]);
        s0 = s0 + x[x0 + k] * w;
        s1 = s1 + x[x1 + k] * w;
        s2 = s2 + x[x2 + k] * w;
        s3 = s3 + x[x3 + k] * w;
    }
    store_row(r0, o0, s0);
    store_row(r0 + 1u, o0, s1);
    store_row(r0 + 2u, o0, s2);
    store_row(r0 + 3u, o0, s3);
}
