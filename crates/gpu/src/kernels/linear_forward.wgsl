// z[i, o] = b[o] + sum_k x[i, k] * W[o, k], W stored [fan_out, fan_in] row-major inside
// `params`, and a = f(z) unless the activation is the identity (then only z is written).
// The vec4 kernel: rows of x and W start at multiples of 4 and hold whole vec4s (fan_in,
// x_offset and weight_offset multiples of 4); linear_forward_scalar.wgsl takes every other shape.
//
// Each invocation computes a block of 8 rows x 4 outputs (shared/linear_forward_vec4_block.wgsl),
// holding 32 sums in registers. Measured on SwiftShader (one 256 x 64 by 64 x 64 product): 4 x 4
// blocks with a scalar fallback in the same kernel 0.94 ms, 4 x 4 alone 0.78 ms, 8 x 4 0.70 ms,
// 16 x 4 0.94 ms (registers spill); workgroup tiles with barriers lose.

@group(0) @binding(1) var<storage, read> x: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> params: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> z: array<f32>;
@group(0) @binding(4) var<storage, read_write> a: array<f32>;

fn param_at(i: u32) -> f32 {
    return params[i >> 2u][i & 3u];
}

fn store_one(row: u32, o: u32, value: f32, activated: f32) {
    if row < args.rows && o < args.fan_out {
        let index = row * args.fan_out + o;
        z[index] = value;
        if args.activation != ACTIVATION_IDENTITY {
            a[index] = activated;
        }
    }
}

// Unrolled with constant indices: a loop over the components indexes vectors dynamically,
// which a software adapter pays for.
fn store_row(row: u32, o0: u32, sums: vec4<f32>) {
    let activated = activate4(args.activation, sums);
    store_one(row, o0, sums.x, activated.x);
    store_one(row, o0 + 1u, sums.y, activated.y);
    store_one(row, o0 + 2u, sums.z, activated.z);
    store_one(row, o0 + 3u, sums.w, activated.w);
}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let output_blocks = (args.fan_out + 3u) / 4u;
    if id.x >= ((args.rows + 7u) / 8u) * output_blocks {
        return;
    }
    // Neighbouring invocations share their rows: their input loads are the same addresses.
    let r0 = (id.x / output_blocks) * 8u;
    let o0 = (id.x % output_blocks) * 4u;
    let sums = linear_forward_vec4_block(r0, o0);
    store_row(r0, o0, sums.s0);
    store_row(r0 + 1u, o0, sums.s1);
    store_row(r0 + 2u, o0, sums.s2);
    store_row(r0 + 3u, o0, sums.s3);
    store_row(r0 + 4u, o0, sums.s4);
    store_row(r0 + 5u, o0, sums.s5);
    store_row(r0 + 6u, o0, sums.s6);
    store_row(r0 + 7u, o0, sums.s7);
}
