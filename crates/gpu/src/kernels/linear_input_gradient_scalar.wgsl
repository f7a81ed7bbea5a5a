// The gradient at the input of the activation below one linear layer of any shape
// (linear_input_gradient.wgsl takes the vec4-aligned ones):
// du[i, k] = (sum_o dy[i, o] * W[o, k]) * f'(u[i, k]).
//
// Four neighbouring invocations take neighbouring inputs (their weight loads, u loads and stores
// are consecutive addresses, their dy loads the same); each holds 4 rows x 2 inputs (k, k + 4).
// Each sum adds o = 0, 1, ... in order, as the CPU reference does.

@group(0) @binding(1) var<storage, read> dy: array<f32>;
@group(0) @binding(2) var<storage, read> params: array<f32>;
@group(0) @binding(3) var<storage, read> u_below: array<f32>;
@group(0) @binding(4) var<storage, read_write> du_below: array<f32>;

fn store_one(row: u32, k: u32, sum: f32) {
    if row < args.rows && k < args.fan_in {
        let index = row * args.fan_in + k;
        du_below[index] = sum * activation_derivative(args.activation_below, u_below[index]);
    }
}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    // A group is 4 invocations x 2 inputs each = 8 neighbouring inputs of 4 rows.
    let groups = (args.fan_in + 7u) / 8u;
    let quad = id.x / 4u;
    let r0 = (quad / groups) * 4u;
    if r0 >= args.rows {
        return;
    }
    let k = (quad % groups) * 8u + id.x % 4u;
    // Rows and inputs past the edge repeat the last one, so that every load is in bounds; their
    // sums are not stored.
    let last_row = args.rows - 1u;
    let last_input = args.fan_in - 1u;
    let ka = min(k, last_input);
    let kb = min(k + 4u, last_input);
    let d = vec4<u32>(r0, min(r0 + 1u, last_row), min(r0 + 2u, last_row), min(r0 + 3u, last_row)) * args.fan_out;
    var sa = vec4<f32>(0.0);
    var sb = vec4<f32>(0.0);
    for (var o = 0u; o < args.fan_out; o = o + 1u) {
        let w = args.weight_offset + o * args.fan_in;
        let dyo = vec4<f32>(dy[d.x + o], dy[d.y + o], dy[d.z + o], dy[d.w + o]);
        sa = sa + dyo * params[w + ka];
        sb = sb + dyo * params[w + kb];
    }
    store_one(r0, k, sa.x);
    store_one(r0 + 1u, k, sa.y);
    store_one(r0 + 2u, k, sa.z);
    store_one(r0 + 3u, k, sa.w);
    store_one(r0, k + 4u, sb.x);
    store_one(r0 + 1u, k + 4u, sb.y);
    store_one(r0 + 2u, k + 4u, sb.z);
    store_one(r0 + 3u, k + 4u, sb.w);
}
