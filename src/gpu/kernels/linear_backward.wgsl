// The backward of one linear layer in one dispatch, three kinds of job over the invocations:
// - weight blocks: dW[o, k] += sum_i dy[i, o] * x[i, k], 4 outputs x 4 inputs per invocation;
// - bias blocks: db[o] += sum_i dy[i, o], 4 outputs per invocation;
// - input blocks (when input_gradient = 1): du[i, k] = (sum_o dy[i, o] * W[o, k]) * f'(u[i, k]),
//   the gradient at the input of the activation below, 4 rows x 4 inputs per invocation.
// Parameter gradients add rows in order onto what `grads` holds, as on the CPU, so accumulating
// micro-batches adds in the same sequence as the full batch. Blocks hold their sums in
// registers; indices past an edge repeat the last one and are not stored.

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
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read> dy: array<f32>;
@group(0) @binding(3) var<storage, read> params: array<f32>;
@group(0) @binding(4) var<storage, read> u_below: array<f32>;
@group(0) @binding(5) var<storage, read_write> grads: array<f32>;
@group(0) @binding(6) var<storage, read_write> du_below: array<f32>;

fn input_vec4(row: u32, k: vec4<u32>) -> vec4<f32> {
    let base = p.x_offset + row * p.fan_in;
    return vec4<f32>(x[base + k.x], x[base + k.y], x[base + k.z], x[base + k.w]);
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
    for (var i = 0u; i < p.rows; i = i + 1u) {
        let xi = input_vec4(i, k);
        let d = i * p.fan_out;
        s0 = s0 + dy[d + o.x] * xi;
        s1 = s1 + dy[d + o.y] * xi;
        s2 = s2 + dy[d + o.z] * xi;
        s3 = s3 + dy[d + o.w] * xi;
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
    for (var i = 0u; i < p.rows; i = i + 1u) {
        let d = i * p.fan_out;
        s = s + vec4<f32>(dy[d + o.x], dy[d + o.y], dy[d + o.z], dy[d + o.w]);
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
    for (var o = 0u; o < p.fan_out; o = o + 1u) {
        let w = p.weight_offset + o * p.fan_in;
        let wo = vec4<f32>(params[w + k0], params[w + k1], params[w + k2], params[w + k3]);
        s0 = s0 + dy[d0 + o] * wo;
        s1 = s1 + dy[d1 + o] * wo;
        s2 = s2 + dy[d2 + o] * wo;
        s3 = s3 + dy[d3 + o] * wo;
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
