// z[i, o] = b[o] + sum_k x[i, k] * W[o, k], W stored [fan_out, fan_in] row-major inside
// `params`, and a = f(z) unless the activation is the identity (then only z is written).
//
// Each invocation computes a block of 4 rows x 4 outputs, holding 16 sums in registers: every
// weight and input loaded serves four products. Each sum still starts at the bias and adds
// k = 0, 1, ... in order, as the CPU reference does. Measured on SwiftShader, register blocks
// beat both one output per invocation and workgroup tiles with barriers.
//
// The inputs are read as vec4s (every buffer holds whole vec4s): when the rows of x and W start
// at multiples of 4, four k at a time, one load per row instead of four; otherwise one value at
// a time. Both paths add the same products in the same order.

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
@group(0) @binding(1) var<storage, read> x: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> params: array<vec4<f32>>;

fn x_at(i: u32) -> f32 {
    return x[i >> 2u][i & 3u];
}

fn param_at(i: u32) -> f32 {
    return params[i >> 2u][i & 3u];
}
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
        param_at(p.bias_offset + min(o0, last_output)),
        param_at(p.bias_offset + o1),
        param_at(p.bias_offset + o2),
        param_at(p.bias_offset + o3),
    );
    var s0 = bias;
    var s1 = bias;
    var s2 = bias;
    var s3 = bias;
    if ((p.fan_in | p.x_offset | p.weight_offset) & 3u) == 0u {
        for (var k4 = 0u; k4 < p.fan_in / 4u; k4 = k4 + 1u) {
            // Column j of `w` holds W[o0..o0+4, 4 k4 + j]: the weights of input k = 4 k4 + j.
            let w = transpose(mat4x4<f32>(
                params[(w0 >> 2u) + k4],
                params[(w1 >> 2u) + k4],
                params[(w2 >> 2u) + k4],
                params[(w3 >> 2u) + k4],
            ));
            let a0 = x[(x0 >> 2u) + k4];
            let a1 = x[(x1 >> 2u) + k4];
            let a2 = x[(x2 >> 2u) + k4];
            let a3 = x[(x3 >> 2u) + k4];
            // Unrolled with constant indices: a loop over j indexes vectors dynamically, which
            // a software adapter pays for.
            s0 = s0 + a0.x * w[0];
            s1 = s1 + a1.x * w[0];
            s2 = s2 + a2.x * w[0];
            s3 = s3 + a3.x * w[0];
            s0 = s0 + a0.y * w[1];
            s1 = s1 + a1.y * w[1];
            s2 = s2 + a2.y * w[1];
            s3 = s3 + a3.y * w[1];
            s0 = s0 + a0.z * w[2];
            s1 = s1 + a1.z * w[2];
            s2 = s2 + a2.z * w[2];
            s3 = s3 + a3.z * w[2];
            s0 = s0 + a0.w * w[3];
            s1 = s1 + a1.w * w[3];
            s2 = s2 + a2.w * w[3];
            s3 = s3 + a3.w * w[3];
        }
    } else {
        for (var k = 0u; k < p.fan_in; k = k + 1u) {
            let w = vec4<f32>(param_at(w0 + k), param_at(w1 + k), param_at(w2 + k), param_at(w3 + k));
            s0 = s0 + x_at(x0 + k) * w;
            s1 = s1 + x_at(x1 + k) * w;
            s2 = s2 + x_at(x2 + k) * w;
            s3 = s3 + x_at(x3 + k) * w;
        }
    }
    store_row(r0, o0, s0);
    store_row(r0 + 1u, o0, s1);
    store_row(r0 + 2u, o0, s2);
    store_row(r0 + 3u, o0, s3);
}
