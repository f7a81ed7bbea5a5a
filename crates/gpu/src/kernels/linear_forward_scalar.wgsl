// The forward of one linear layer of any shape (linear_forward.wgsl takes the vec4-aligned ones):
// z[i, o] = b[o] + sum_k x[i, k] * W[o, k], and a = f(z) unless the activation is the identity.
//
// Four neighbouring invocations take four neighbouring outputs, so that their weight loads and
// their stores are consecutive addresses; each invocation computes 2 rows x 4 outputs (o, o + 4,
// o + 8, o + 12). Each sum starts at the bias and adds k = 0, 1, ... in order, as the CPU
// reference does. Measured on SwiftShader for 256 rows of 2 -> 64: 0.38 ms with 4 x 4 blocks of
// neighbouring outputs in one invocation, 0.23 ms this way.

@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read> params: array<f32>;
@group(0) @binding(3) var<storage, read_write> z: array<f32>;
@group(0) @binding(4) var<storage, read_write> a: array<f32>;

fn store_one(row: u32, o: u32, value: f32) {
    if row < args.rows && o < args.fan_out {
        let index = row * args.fan_out + o;
        z[index] = value;
        if args.activation != ACTIVATION_IDENTITY {
            a[index] = activate(args.activation, value);
        }
    }
}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    // A group is 4 invocations x 4 outputs each = 16 neighbouring outputs of 2 rows.
    let groups = (args.fan_out + 15u) / 16u;
    let quad = id.x / 4u;
    let r0 = (quad / groups) * 2u;
    if r0 >= args.rows {
        return;
    }
    let c = (quad % groups) * 16u + id.x % 4u;
    // Rows and outputs past the edge repeat the last one, so that every load is in bounds;
    // their sums are not stored.
    let last_output = args.fan_out - 1u;
    let o0 = min(c, last_output);
    let o1 = min(c + 4u, last_output);
    let o2 = min(c + 8u, last_output);
    let o3 = min(c + 12u, last_output);
    let x0 = args.x_offset + r0 * args.fan_in;
    let x1 = args.x_offset + min(r0 + 1u, args.rows - 1u) * args.fan_in;
    let w0 = args.weight_offset + o0 * args.fan_in;
    let w1 = args.weight_offset + o1 * args.fan_in;
    let w2 = args.weight_offset + o2 * args.fan_in;
    let w3 = args.weight_offset + o3 * args.fan_in;
    let bias = vec4<f32>(
        params[args.bias_offset + o0],
        params[args.bias_offset + o1],
        params[args.bias_offset + o2],
        params[args.bias_offset + o3],
    );
    var s0 = bias;
    var s1 = bias;
    for (var k = 0u; k < args.fan_in; k = k + 1u) {
        let w = vec4<f32>(params[w0 + k], params[w1 + k], params[w2 + k], params[w3 + k]);
        s0 = s0 + x[x0 + k] * w;
        s1 = s1 + x[x1 + k] * w;
    }
    store_one(r0, c, s0.x);
    store_one(r0, c + 4u, s0.y);
    store_one(r0, c + 8u, s0.z);
    store_one(r0, c + 12u, s0.w);
    store_one(r0 + 1u, c, s1.x);
    store_one(r0 + 1u, c + 4u, s1.y);
    store_one(r0 + 1u, c + 8u, s1.z);
    store_one(r0 + 1u, c + 12u, s1.w);
}
