// The forward of a linear layer whose outputs are whole vec4s and whose inputs are not, as a
// block of `rows` rows read from x_offset: job j computes 8 rows x 4 neighbouring outputs (see
// linear_forward_vec4_out.wgsl). It reads args.fan_in, args.fan_out, args.weight_offset, args.bias_offset
// and args.activation, and `x`, `params`, `z` and `a`, which the kernel that includes it declares.

fn forward_vec4_out_jobs(rows: u32) -> u32 {
    return ((rows + 7u) / 8u) * (args.fan_out / 4u);
}

fn store_forward_row(row: u32, rows: u32, at: u32, sums: vec4<f32>) {
    if row < rows {
        z[at] = sums;
        if args.activation != ACTIVATION_IDENTITY {
            a[at] = activate4(args.activation, sums);
        }
    }
}

fn forward_vec4_out_block(job: u32, rows: u32, x_offset: u32) {
    let output_blocks = args.fan_out / 4u;
    if job >= forward_vec4_out_jobs(rows) {
        return;
    }
    let r0 = (job / output_blocks) * 8u;
    let block = job % output_blocks;
    let o0 = block * 4u;
    // Rows past the edge repeat the last one, so that every load is in bounds; they are not
    // stored.
    let last_row = rows - 1u;
    let x0 = x_offset + r0 * args.fan_in;
    let x1 = x_offset + min(r0 + 1u, last_row) * args.fan_in;
    let x2 = x_offset + min(r0 + 2u, last_row) * args.fan_in;
    let x3 = x_offset + min(r0 + 3u, last_row) * args.fan_in;
    let x4 = x_offset + min(r0 + 4u, last_row) * args.fan_in;
    let x5 = x_offset + min(r0 + 5u, last_row) * args.fan_in;
    let x6 = x_offset + min(r0 + 6u, last_row) * args.fan_in;
    let x7 = x_offset + min(r0 + 7u, last_row) * args.fan_in;
    let w0 = args.weight_offset + o0 * args.fan_in;
    let w1 = w0 + args.fan_in;
    let w2 = w1 + args.fan_in;
    let w3 = w2 + args.fan_in;
    let b = args.bias_offset + o0;
    let bias = vec4<f32>(params[b], params[b + 1u], params[b + 2u], params[b + 3u]);
    var s0 = bias;
    var s1 = bias;
    var s2 = bias;
    var s3 = bias;
    var s4 = bias;
    var s5 = bias;
    var s6 = bias;
    var s7 = bias;
    for (var k = 0u; k < args.fan_in; k = k + 1u) {
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
    store_forward_row(r0, rows, r0 * output_blocks + block, s0);
    store_forward_row(r0 + 1u, rows, (r0 + 1u) * output_blocks + block, s1);
    store_forward_row(r0 + 2u, rows, (r0 + 2u) * output_blocks + block, s2);
    store_forward_row(r0 + 3u, rows, (r0 + 3u) * output_blocks + block, s3);
    store_forward_row(r0 + 4u, rows, (r0 + 4u) * output_blocks + block, s4);
    store_forward_row(r0 + 5u, rows, (r0 + 5u) * output_blocks + block, s5);
    store_forward_row(r0 + 6u, rows, (r0 + 6u) * output_blocks + block, s6);
    store_forward_row(r0 + 7u, rows, (r0 + 7u) * output_blocks + block, s7);
}
