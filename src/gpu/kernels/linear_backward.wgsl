// The backward of one linear layer in one dispatch, three kinds of job over the invocations:
// - weight blocks: dW[o, k] += sum_i dy[i, o] * x[i, k], 4 outputs x 4 inputs per invocation;
// - bias blocks: db[o] += sum_i dy[i, o], 4 outputs per invocation;
// - input blocks (when input_gradient = 1): du[i, k] = (sum_o dy[i, o] * W[o, k]) * f'(u[i, k]),
//   the gradient at the input of the activation below, 4 rows x 4 inputs per invocation.
// Parameter gradients add rows in order onto what `grads` holds, as on the CPU, so accumulating
// micro-batches adds in the same sequence as the full batch. Blocks hold their sums in
// registers; indices past an edge repeat the last one and are not stored.
//
// x, dy and the parameters are read as vec4s (every buffer holds whole vec4s): where the rows
// involved start at multiples of 4, one load brings four values; otherwise one value at a time.
// Both paths add the same products in the same order.

struct LinearBackwardParams {
    rows: u32,
    fan_in: u32,
    fan_out: u32,
    weight_offset: u32,
    bias_offset: u32,
    x_offset: u32,
    activation_below: u32,
    input_gradient: u32,
}

@group(0) @binding(0) var<uniform> p: LinearBackwardParams;
@group(0) @binding(1) var<storage, read> x: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> dy: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> params: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read> u_below: array<f32>;
@group(0) @binding(5) var<storage, read_write> grads: array<f32>;
@group(0) @binding(6) var<storage, read_write> du_below: array<f32>;

fn x_at(i: u32) -> f32 {
    return x[i >> 2u][i & 3u];
}

fn dy_at(i: u32) -> f32 {
    return dy[i >> 2u][i & 3u];
}

fn param_at(i: u32) -> f32 {
    return params[i >> 2u][i & 3u];
}

fn input_vec4(row: u32, k: vec4<u32>) -> vec4<f32> {
    let base = p.x_offset + row * p.fan_in;
    return vec4<f32>(x_at(base + k.x), x_at(base + k.y), x_at(base + k.z), x_at(base + k.w));
}

fn dy_vec4(row: u32, o: vec4<u32>) -> vec4<f32> {
    let d = row * p.fan_out;
    return vec4<f32>(dy_at(d + o.x), dy_at(d + o.y), dy_at(d + o.z), dy_at(d + o.w));
}

// Whether rows of x (fan_in values from x_offset) are whole, aligned vec4s.
fn x_rows_aligned() -> bool {
    return ((p.fan_in | p.x_offset) & 3u) == 0u;
}

// Whether rows of dy (fan_out values) are whole, aligned vec4s.
fn dy_rows_aligned() -> bool {
    return (p.fan_out & 3u) == 0u;
}

fn weight_block(o0: u32, k0: u32) {
    let last_input = p.fan_in - 1u;
    let last_output = p.fan_out - 1u;
    let k = vec4<u32>(k0, min(k0 + 1u, last_input), min(k0 + 2u, last_input), min(k0 + 3u, last_input));
    let o = vec4<u32>(o0, min(o0 + 1u, last_output), min(o0 + 2u, last_output), min(o0 + 3u, last_output));
    let g0 = p.weight_offset + o.x * p.fan_in;
    let g1 = p.weight_offset + o.y * p.fan_in;
    let g2 = p.weight_offset + o.z * p.fan_in;
    let g3 = p.weight_offset + o.w * p.fan_in;
    var s0 = vec4<f32>(grads[g0 + k.x], grads[g0 + k.y], grads[g0 + k.z], grads[g0 + k.w]);
    var s1 = vec4<f32>(grads[g1 + k.x], grads[g1 + k.y], grads[g1 + k.z], grads[g1 + k.w]);
    var s2 = vec4<f32>(grads[g2 + k.x], grads[g2 + k.y], grads[g2 + k.z], grads[g2 + k.w]);
    var s3 = vec4<f32>(grads[g3 + k.x], grads[g3 + k.y], grads[g3 + k.z], grads[g3 + k.w]);
    if x_rows_aligned() && dy_rows_aligned() {
        // k0 and o0 are multiples of 4 and the blocks lie inside the rows.
        for (var i = 0u; i < p.rows; i = i + 1u) {
            let xi = x[((p.x_offset + i * p.fan_in + k0) >> 2u)];
            let di = dy[((i * p.fan_out + o0) >> 2u)];
            s0 = s0 + di.x * xi;
            s1 = s1 + di.y * xi;
            s2 = s2 + di.z * xi;
            s3 = s3 + di.w * xi;
        }
    } else {
        for (var i = 0u; i < p.rows; i = i + 1u) {
            let xi = input_vec4(i, k);
            let di = dy_vec4(i, o);
            s0 = s0 + di.x * xi;
            s1 = s1 + di.y * xi;
            s2 = s2 + di.z * xi;
            s3 = s3 + di.w * xi;
        }
    }
    for (var j = 0u; j < 4u; j = j + 1u) {
        let kj = k0 + j;
        if kj < p.fan_in {
            if o0 < p.fan_out {
                grads[g0 + kj] = s0[j];
            }
            if o0 + 1u < p.fan_out {
                grads[g1 + kj] = s1[j];
            }
            if o0 + 2u < p.fan_out {
                grads[g2 + kj] = s2[j];
            }
            if o0 + 3u < p.fan_out {
                grads[g3 + kj] = s3[j];
            }
        }
    }
}

fn bias_block(o0: u32) {
    let last_output = p.fan_out - 1u;
    let o = vec4<u32>(o0, min(o0 + 1u, last_output), min(o0 + 2u, last_output), min(o0 + 3u, last_output));
    let b = p.bias_offset;
    var s = vec4<f32>(grads[b + o.x], grads[b + o.y], grads[b + o.z], grads[b + o.w]);
    if dy_rows_aligned() {
        for (var i = 0u; i < p.rows; i = i + 1u) {
            s = s + dy[((i * p.fan_out + o0) >> 2u)];
        }
    } else {
        for (var i = 0u; i < p.rows; i = i + 1u) {
            s = s + dy_vec4(i, o);
        }
    }
    for (var j = 0u; j < 4u; j = j + 1u) {
        if o0 + j < p.fan_out {
            grads[b + o0 + j] = s[j];
        }
    }
}

fn store_input_row(row: u32, k0: u32, sums: vec4<f32>) {
    if row >= p.rows {
        return;
    }
    for (var j = 0u; j < 4u; j = j + 1u) {
        let k = k0 + j;
        if k < p.fan_in {
            let index = row * p.fan_in + k;
            du_below[index] = sums[j] * activation_derivative(p.activation_below, u_below[index]);
        }
    }
}

fn input_block(r0: u32, k0: u32) {
    let last_row = p.rows - 1u;
    let last_input = p.fan_in - 1u;
    let k1 = min(k0 + 1u, last_input);
    let k2 = min(k0 + 2u, last_input);
    let k3 = min(k0 + 3u, last_input);
    let d0 = min(r0, last_row) * p.fan_out;
    let d1 = min(r0 + 1u, last_row) * p.fan_out;
    let d2 = min(r0 + 2u, last_row) * p.fan_out;
    let d3 = min(r0 + 3u, last_row) * p.fan_out;
    var s0 = vec4<f32>(0.0);
    var s1 = vec4<f32>(0.0);
    var s2 = vec4<f32>(0.0);
    var s3 = vec4<f32>(0.0);
    if dy_rows_aligned() && ((p.fan_in | p.weight_offset) & 3u) == 0u {
        // Four outputs at a time: dy[r, o..o+4] per row, W[o + j, k0..k0+4] per output.
        for (var o4 = 0u; o4 < p.fan_out / 4u; o4 = o4 + 1u) {
            let a0 = dy[(d0 >> 2u) + o4];
            let a1 = dy[(d1 >> 2u) + o4];
            let a2 = dy[(d2 >> 2u) + o4];
            let a3 = dy[(d3 >> 2u) + o4];
            // Unrolled with constant indices: a loop over j indexes vectors dynamically, which
            // a software adapter pays for.
            let w = (p.weight_offset + 4u * o4 * p.fan_in + k0) >> 2u;
            let step = p.fan_in >> 2u;
            let wa = params[w];
            let wb = params[w + step];
            let wc = params[w + 2u * step];
            let wd = params[w + 3u * step];
            s0 = s0 + a0.x * wa;
            s1 = s1 + a1.x * wa;
            s2 = s2 + a2.x * wa;
            s3 = s3 + a3.x * wa;
            s0 = s0 + a0.y * wb;
            s1 = s1 + a1.y * wb;
            s2 = s2 + a2.y * wb;
            s3 = s3 + a3.y * wb;
            s0 = s0 + a0.z * wc;
            s1 = s1 + a1.z * wc;
            s2 = s2 + a2.z * wc;
            s3 = s3 + a3.z * wc;
            s0 = s0 + a0.w * wd;
            s1 = s1 + a1.w * wd;
            s2 = s2 + a2.w * wd;
            s3 = s3 + a3.w * wd;
        }
    } else {
        for (var o = 0u; o < p.fan_out; o = o + 1u) {
            let w = p.weight_offset + o * p.fan_in;
            let wo = vec4<f32>(param_at(w + k0), param_at(w + k1), param_at(w + k2), param_at(w + k3));
            s0 = s0 + dy_at(d0 + o) * wo;
            s1 = s1 + dy_at(d1 + o) * wo;
            s2 = s2 + dy_at(d2 + o) * wo;
            s3 = s3 + dy_at(d3 + o) * wo;
        }
    }
    store_input_row(r0, k0, s0);
    store_input_row(r0 + 1u, k0, s1);
    store_input_row(r0 + 2u, k0, s2);
    store_input_row(r0 + 3u, k0, s3);
}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let input_blocks = (p.fan_in + 3u) / 4u;
    let output_blocks = (p.fan_out + 3u) / 4u;
    let weight_jobs = output_blocks * input_blocks;
    let parameter_jobs = weight_jobs + output_blocks;
    let index = id.x;
    if index < weight_jobs {
        weight_block((index / input_blocks) * 4u, (index % input_blocks) * 4u);
    } else if index < parameter_jobs {
        bias_block((index - weight_jobs) * 4u);
    } else if p.input_gradient == 1u {
        let job = index - parameter_jobs;
        if job < ((p.rows + 3u) / 4u) * input_blocks {
            input_block((job / input_blocks) * 4u, (job % input_blocks) * 4u);
        }
    }
}
