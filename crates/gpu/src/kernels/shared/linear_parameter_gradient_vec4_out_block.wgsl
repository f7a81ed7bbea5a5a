// The body of linear_parameter_gradient_vec4_out.wgsl, shared with
// first_and_output_parameter_gradients.wgsl: job `job` of (fan_out / 4) x ceil(fan_in / 2), one
// block of 4 outputs x 2 inputs; reads `x` (array<f32>) and `dy` (array<vec4<f32>>), adds into
// `grads` (bindings the kernel that includes it declares).

// dW[o0..o0 + 4, k]: four values a row of W apart.
fn load_column(at: u32) -> vec4<f32> {
    return vec4<f32>(grads[at], grads[at + args.fan_in], grads[at + 2u * args.fan_in], grads[at + 3u * args.fan_in]);
}

fn store_column(at: u32, sums: vec4<f32>) {
    grads[at] = sums.x;
    grads[at + args.fan_in] = sums.y;
    grads[at + 2u * args.fan_in] = sums.z;
    grads[at + 3u * args.fan_in] = sums.w;
}

fn parameter_gradient_vec4_out_jobs() -> u32 {
    return (args.fan_out / 4u) * ((args.fan_in + 1u) / 2u);
}

fn parameter_gradient_vec4_out_block(job: u32) {
    let output_blocks = args.fan_out / 4u;
    let input_blocks = (args.fan_in + 1u) / 2u;
    if job >= parameter_gradient_vec4_out_jobs() {
        return;
    }
    let block = job / input_blocks;
    let o0 = block * 4u;
    let ka = (job % input_blocks) * 2u;
    // With an odd fan_in the last block's second input repeats its first and is not stored.
    let kb = min(ka + 1u, args.fan_in - 1u);
    let ga = args.weight_offset + o0 * args.fan_in + ka;
    let gb = args.weight_offset + o0 * args.fan_in + kb;
    var sa = load_column(ga);
    var sb = load_column(gb);
    let b = args.bias_offset + o0;
    var bias = vec4<f32>(grads[b], grads[b + 1u], grads[b + 2u], grads[b + 3u]);
    for (var i = 0u; i < args.rows; i = i + 1u) {
        let d = dy[i * output_blocks + block];
        let xi = args.x_offset + i * args.fan_in;
        sa = sa + d * x[xi + ka];
        sb = sb + d * x[xi + kb];
        bias = bias + d;
    }
    store_column(ga, sa);
    if kb != ka {
        store_column(gb, sb);
    }
    if ka == 0u {
        grads[b] = bias.x;
        grads[b + 1u] = bias.y;
        grads[b + 2u] = bias.z;
        grads[b + 3u] = bias.w;
    }
}
