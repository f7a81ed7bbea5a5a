// The body of linear_forward.wgsl, shared with top_layer_and_output.wgsl: the sums of 8 rows
// from r0 x 4 outputs from o0 (z before the activation). It reads args.rows, args.fan_in, args.fan_out,
// args.weight_offset, args.bias_offset and args.x_offset, and `x` and `params` (vec4 arrays) and
// param_at, which the kernel that includes it declares.
//
// Every weight loaded serves eight products, every input four. Each sum starts at the bias and
// adds k = 0, 1, ... in order, as the CPU reference does.

struct ForwardBlock {
    s0: vec4<f32>,
    s1: vec4<f32>,
    s2: vec4<f32>,
    s3: vec4<f32>,
    s4: vec4<f32>,
    s5: vec4<f32>,
    s6: vec4<f32>,
    s7: vec4<f32>,
}

fn linear_forward_vec4_block(r0: u32, o0: u32) -> ForwardBlock {
    // Rows and outputs past the edge repeat the last one, so that every load is in bounds and
    // the loop has no branches; their sums are not stored.
    let last_row = args.rows - 1u;
    let last_output = args.fan_out - 1u;
    let x0 = (args.x_offset + min(r0, last_row) * args.fan_in) >> 2u;
    let x1 = (args.x_offset + min(r0 + 1u, last_row) * args.fan_in) >> 2u;
    let x2 = (args.x_offset + min(r0 + 2u, last_row) * args.fan_in) >> 2u;
    let x3 = (args.x_offset + min(r0 + 3u, last_row) * args.fan_in) >> 2u;
    let x4 = (args.x_offset + min(r0 + 4u, last_row) * args.fan_in) >> 2u;
    let x5 = (args.x_offset + min(r0 + 5u, last_row) * args.fan_in) >> 2u;
    let x6 = (args.x_offset + min(r0 + 6u, last_row) * args.fan_in) >> 2u;
    let x7 = (args.x_offset + min(r0 + 7u, last_row) * args.fan_in) >> 2u;
    let o1 = min(o0 + 1u, last_output);
    let o2 = min(o0 + 2u, last_output);
    let o3 = min(o0 + 3u, last_output);
    let w0 = (args.weight_offset + min(o0, last_output) * args.fan_in) >> 2u;
    let w1 = (args.weight_offset + o1 * args.fan_in) >> 2u;
    let w2 = (args.weight_offset + o2 * args.fan_in) >> 2u;
    let w3 = (args.weight_offset + o3 * args.fan_in) >> 2u;
    let bias = vec4<f32>(
        param_at(args.bias_offset + min(o0, last_output)),
        param_at(args.bias_offset + o1),
        param_at(args.bias_offset + o2),
        param_at(args.bias_offset + o3),
    );
    var s0 = bias;
    var s1 = bias;
    var s2 = bias;
    var s3 = bias;
    var s4 = bias;
    var s5 = bias;
    var s6 = bias;
    var s7 = bias;
    let k4_end = args.fan_in / 4u;
    for (var k4 = 0u; k4 < k4_end; k4 = k4 + 1u) {
        // Column j of `w` holds W[o0..o0+4, 4 k4 + j]: the weights of input k = 4 k4 + j.
        let w = transpose(mat4x4<f32>(params[w0 + k4], params[w1 + k4], params[w2 + k4], params[w3 + k4]));
        let a0 = x[x0 + k4];
        let a1 = x[x1 + k4];
        let a2 = x[x2 + k4];
        let a3 = x[x3 + k4];
        let a4 = x[x4 + k4];
        let a5 = x[x5 + k4];
        let a6 = x[x6 + k4];
        let a7 = x[x7 + k4];
        s0 = s0 + a0.x * w[0];
        s1 = s1 + a1.x * w[0];
        s2 = s2 + a2.x * w[0];
        s3 = s3 + a3.x * w[0];
        s4 = s4 + a4.x * w[0];
        s5 = s5 + a5.x * w[0];
        s6 = s6 + a6.x * w[0];
        s7 = s7 + a7.x * w[0];
        s0 = s0 + a0.y * w[1];
        s1 = s1 + a1.y * w[1];
        s2 = s2 + a2.y * w[1];
        s3 = s3 + a3.y * w[1];
        s4 = s4 + a4.y * w[1];
        s5 = s5 + a5.y * w[1];
        s6 = s6 + a6.y * w[1];
        s7 = s7 + a7.y * w[1];
        s0 = s0 + a0.z * w[2];
        s1 = s1 + a1.z * w[2];
        s2 = s2 + a2.z * w[2];
        s3 = s3 + a3.z * w[2];
        s4 = s4 + a4.z * w[2];
        s5 = s5 + a5.z * w[2];
        s6 = s6 + a6.z * w[2];
        s7 = s7 + a7.z * w[2];
        s0 = s0 + a0.w * w[3];
        s1 = s1 + a1.w * w[3];
        s2 = s2 + a2.w * w[3];
        s3 = s3 + a3.w * w[3];
        s4 = s4 + a4.w * w[3];
        s5 = s5 + a5.w * w[3];
        s6 = s6 + a6.w * w[3];
        s7 = s7 + a7.w * w[3];
    }
    return ForwardBlock(s0, s1, s2, s3, s4, s5, s6, s7);
}
