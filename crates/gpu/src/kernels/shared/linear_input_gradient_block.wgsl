// The body of linear_input_gradient.wgsl, shared with linear_backward.wgsl: job `job` of
// ceil(rows / 8) x ceil(fan_in / 8), one block of 8 rows x 8 inputs; reads `dy`, `params`
// and `u_below`, writes `du_below` (bindings the kernel that includes it declares).

fn derivative(u: vec4<f32>) -> vec4<f32> {
    return activation_derivative4(args.activation_below, u);
}

fn store_row(row: u32, k4a: u32, k4b: u32, sa: vec4<f32>, sb: vec4<f32>) {
    if row >= args.rows {
        return;
    }
    let at = row * (args.fan_in / 4u);
    du_below[at + k4a] = sa * derivative(u_below[at + k4a]);
    if k4b != k4a {
        du_below[at + k4b] = sb * derivative(u_below[at + k4b]);
    }
}

fn input_gradient_block(job: u32) {
    let vec4s_per_row = args.fan_in / 4u;
    let input_blocks = (vec4s_per_row + 1u) / 2u;
    if job >= ((args.rows + 7u) / 8u) * input_blocks {
        return;
    }
    // Neighbouring invocations share their rows: their dy loads are the same addresses.
    let r0 = (job / input_blocks) * 8u;
    let k4a = (job % input_blocks) * 2u;
    // With fan_in = 4 (mod 8) the last block's second half repeats its first and is not stored.
    let k4b = min(k4a + 1u, vec4s_per_row - 1u);
    // Rows past the edge repeat the last one, so that every load is in bounds; they are not stored.
    let last_row = args.rows - 1u;
    let dy_stride = args.fan_out / 4u;
    let d0 = min(r0, last_row) * dy_stride;
    let d1 = min(r0 + 1u, last_row) * dy_stride;
    let d2 = min(r0 + 2u, last_row) * dy_stride;
    let d3 = min(r0 + 3u, last_row) * dy_stride;
    let d4 = min(r0 + 4u, last_row) * dy_stride;
    let d5 = min(r0 + 5u, last_row) * dy_stride;
    let d6 = min(r0 + 6u, last_row) * dy_stride;
    let d7 = min(r0 + 7u, last_row) * dy_stride;
    var s0a = vec4<f32>(0.0);
    var s1a = vec4<f32>(0.0);
    var s2a = vec4<f32>(0.0);
    var s3a = vec4<f32>(0.0);
    var s4a = vec4<f32>(0.0);
    var s5a = vec4<f32>(0.0);
    var s6a = vec4<f32>(0.0);
    var s7a = vec4<f32>(0.0);
    var s0b = vec4<f32>(0.0);
    var s1b = vec4<f32>(0.0);
    var s2b = vec4<f32>(0.0);
    var s3b = vec4<f32>(0.0);
    var s4b = vec4<f32>(0.0);
    var s5b = vec4<f32>(0.0);
    var s6b = vec4<f32>(0.0);
    var s7b = vec4<f32>(0.0);
    let w_base = args.weight_offset / 4u;
    for (var o4 = 0u; o4 < dy_stride; o4 = o4 + 1u) {
        // Rows 4 o4 + j of W, two vec4s each: W[o, 4 k4a ..] and W[o, 4 k4b ..].
        let w = w_base + 4u * o4 * vec4s_per_row;
        let w0a = params[w + 0u * vec4s_per_row + k4a];
        let w0b = params[w + 0u * vec4s_per_row + k4b];
        let w1a = params[w + 1u * vec4s_per_row + k4a];
        let w1b = params[w + 1u * vec4s_per_row + k4b];
        let w2a = params[w + 2u * vec4s_per_row + k4a];
        let w2b = params[w + 2u * vec4s_per_row + k4b];
        let w3a = params[w + 3u * vec4s_per_row + k4a];
        let w3b = params[w + 3u * vec4s_per_row + k4b];
        let a0 = dy[d0 + o4];
        let a1 = dy[d1 + o4];
        let a2 = dy[d2 + o4];
        let a3 = dy[d3 + o4];
        let a4 = dy[d4 + o4];
        let a5 = dy[d5 + o4];
        let a6 = dy[d6 + o4];
        let a7 = dy[d7 + o4];
        // Unrolled with constant indices: a loop over the components indexes vectors
        // dynamically, which a software adapter pays for.
        s0a = s0a + a0.x * w0a;
        s1a = s1a + a1.x * w0a;
        s2a = s2a + a2.x * w0a;
        s3a = s3a + a3.x * w0a;
        s4a = s4a + a4.x * w0a;
        s5a = s5a + a5.x * w0a;
        s6a = s6a + a6.x * w0a;
        s7a = s7a + a7.x * w0a;
        s0b = s0b + a0.x * w0b;
        s1b = s1b + a1.x * w0b;
        s2b = s2b + a2.x * w0b;
        s3b = s3b + a3.x * w0b;
        s4b = s4b + a4.x * w0b;
        s5b = s5b + a5.x * w0b;
        s6b = s6b + a6.x * w0b;
        s7b = s7b + a7.x * w0b;
        s0a = s0a + a0.y * w1a;
        s1a = s1a + a1.y * w1a;
        s2a = s2a + a2.y * w1a;
        s3a = s3a + a3.y * w1a;
        s4a = s4a + a4.y * w1a;
        s5a = s5a + a5.y * w1a;
        s6a = s6a + a6.y * w1a;
        s7a = s7a + a7.y * w1a;
        s0b = s0b + a0.y * w1b;
        s1b = s1b + a1.y * w1b;
        s2b = s2b + a2.y * w1b;
        s3b = s3b + a3.y * w1b;
        s4b = s4b + a4.y * w1b;
        s5b = s5b + a5.y * w1b;
        s6b = s6b + a6.y * w1b;
        s7b = s7b + a7.y * w1b;
        s0a = s0a + a0.z * w2a;
        s1a = s1a + a1.z * w2a;
        s2a = s2a + a2.z * w2a;
        s3a = s3a + a3.z * w2a;
        s4a = s4a + a4.z * w2a;
        s5a = s5a + a5.z * w2a;
        s6a = s6a + a6.z * w2a;
        s7a = s7a + a7.z * w2a;
        s0b = s0b + a0.z * w2b;
        s1b = s1b + a1.z * w2b;
        s2b = s2b + a2.z * w2b;
        s3b = s3b + a3.z * w2b;
        s4b = s4b + a4.z * w2b;
        s5b = s5b + a5.z * w2b;
        s6b = s6b + a6.z * w2b;
        s7b = s7b + a7.z * w2b;
        s0a = s0a + a0.w * w3a;
        s1a = s1a + a1.w * w3a;
        s2a = s2a + a2.w * w3a;
        s3a = s3a + a3.w * w3a;
        s4a = s4a + a4.w * w3a;
        s5a = s5a + a5.w * w3a;
        s6a = s6a + a6.w * w3a;
        s7a = s7a + a7.w * w3a;
        s0b = s0b + a0.w * w3b;
        s1b = s1b + a1.w * w3b;
        s2b = s2b + a2.w * w3b;
        s3b = s3b + a3.w * w3b;
        s4b = s4b + a4.w * w3b;
        s5b = s5b + a5.w * w3b;
        s6b = s6b + a6.w * w3b;
        s7b = s7b + a7.w * w3b;
    }
    store_row(r0, k4a, k4b, s0a, s0b);
    store_row(r0 + 1u, k4a, k4b, s1a, s1b);
    store_row(r0 + 2u, k4a, k4b, s2a, s2b);
    store_row(r0 + 3u, k4a, k4b, s3a, s3b);
    store_row(r0 + 4u, k4a, k4b, s4a, s4b);
    store_row(r0 + 5u, k4a, k4b, s5a, s5b);
    store_row(r0 + 6u, k4a, k4b, s6a, s6b);
    store_row(r0 + 7u, k4a, k4b, s7a, s7b);
}
