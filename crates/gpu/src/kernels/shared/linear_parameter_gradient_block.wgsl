// The body of linear_parameter_gradient.wgsl, shared with linear_backward.wgsl: job `job` of
// (fan_out / 4) x ceil(fan_in / 8), one block of 4 outputs x 8 inputs; reads `x` and `dy`,
// adds into `grads` (bindings the kernel that includes it declares) with shared/grads4.wgsl.

fn parameter_gradient_jobs() -> u32 {
    return (args.fan_out / 4u) * ((args.fan_in / 4u + 1u) / 2u);
}

fn parameter_gradient_block(job: u32) {
    let vec4s_per_row = args.fan_in / 4u;
    let input_blocks = (vec4s_per_row + 1u) / 2u;
    if job >= parameter_gradient_jobs() {
        return;
    }
    // Neighbouring invocations share their outputs: their dy loads are the same addresses.
    let o0 = (job / input_blocks) * 4u;
    let k4a = (job % input_blocks) * 2u;
    // With fan_in = 4 (mod 8) the last block's second half repeats its first and is not stored.
    let k4b = min(k4a + 1u, vec4s_per_row - 1u);
    let g0 = args.weight_offset + o0 * args.fan_in + 4u * k4a;
    let g1 = g0 + args.fan_in;
    let g2 = g1 + args.fan_in;
    let g3 = g2 + args.fan_in;
    let second = 4u * (k4b - k4a);
    var s0a = load4(g0);
    var s1a = load4(g1);
    var s2a = load4(g2);
    var s3a = load4(g3);
    var s0b = load4(g0 + second);
    var s1b = load4(g1 + second);
    var s2b = load4(g2 + second);
    var s3b = load4(g3 + second);
    var bias = load4(args.bias_offset + o0);
    let x_base = args.x_offset >> 2u;
    let dy_base = o0 >> 2u;
    let dy_stride = args.fan_out >> 2u;
    for (var i = 0u; i < args.rows; i = i + 1u) {
        let xa = x[x_base + i * vec4s_per_row + k4a];
        let xb = x[x_base + i * vec4s_per_row + k4b];
        let d = dy[dy_base + i * dy_stride];
        s0a = s0a + d.x * xa;
        s1a = s1a + d.y * xa;
        s2a = s2a + d.z * xa;
        s3a = s3a + d.w * xa;
        s0b = s0b + d.x * xb;
        s1b = s1b + d.y * xb;
        s2b = s2b + d.z * xb;
        s3b = s3b + d.w * xb;
        bias = bias + d;
    }
    store4(g0, s0a);
    store4(g1, s1a);
    store4(g2, s2a);
    store4(g3, s3a);
    if k4b != k4a {
        store4(g0 + second, s0b);
        store4(g1 + second, s1b);
        store4(g2 + second, s2b);
        store4(g3 + second, s3b);
    }
    if k4a == 0u {
        store4(args.bias_offset + o0, bias);
    }
}
