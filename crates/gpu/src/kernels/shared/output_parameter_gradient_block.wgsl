// The output layer's parameter gradients as a block of a larger dispatch (shared with
// first_and_output_parameter_gradients.wgsl, which declares `p` with the output layer's
// classes, output_fan_in, output_weight_offset and output_bias_offset, and the bindings
// `a_top` (its input, array<vec4<f32>>), `dlogits` and `grads` (array<f32>, read and written
// through shared/grads4.wgsl)). For at most four classes and an input width that is a
// multiple of 4.

fn output_parameter_gradient_jobs() -> u32 {
    return args.output_fan_in / 4u;
}

// Job `block`: dW[c, 4 block .. 4 block + 4] for every class c, and db when block is 0. Each
// sum adds rows in order onto what `grads` holds, as linear_parameter_gradient_scalar.wgsl does
// (dW[c, k] + dlogits[i, c] * a_top[i, k]), so micro-batches accumulate as the full batch.
fn output_parameter_gradient_block(block: u32) {
    let n = args.classes;
    let last_class = n - 1u;
    let c1 = min(1u, last_class);
    let c2 = min(2u, last_class);
    let c3 = min(3u, last_class);
    let width = args.output_fan_in;
    let g0 = args.output_weight_offset + 4u * block;
    let g1 = g0 + c1 * width;
    let g2 = g0 + c2 * width;
    let g3 = g0 + c3 * width;
    var s0 = load4(g0);
    var s1 = load4(g1);
    var s2 = load4(g2);
    var s3 = load4(g3);
    let b = args.output_bias_offset;
    var bias = vec4<f32>(grads[b], grads[b + c1], grads[b + c2], grads[b + c3]);
    let vec4s_per_row = width / 4u;
    for (var i = 0u; i < args.rows; i = i + 1u) {
        let v = a_top[i * vec4s_per_row + block];
        let at = i * n;
        let d = vec4<f32>(dlogits[at], dlogits[at + c1], dlogits[at + c2], dlogits[at + c3]);
        s0 = s0 + d.x * v;
        s1 = s1 + d.y * v;
        s2 = s2 + d.z * v;
        s3 = s3 + d.w * v;
        bias = bias + d;
    }
    // Classes past the last repeat it: stored once.
    store4(g0, s0);
    if n > 1u {
        store4(g1, s1);
    }
    if n > 2u {
        store4(g2, s2);
    }
    if n > 3u {
        store4(g3, s3);
    }
    if block == 0u {
        grads[b] = bias.x;
        if n > 1u {
            grads[b + 1u] = bias.y;
        }
        if n > 2u {
            grads[b + 2u] = bias.z;
        }
        if n > 3u {
            grads[b + 3u] = bias.w;
        }
    }
}
