// Normalization in training mode: one invocation per statistic set (BatchNorm: a feature over
// the rows; LayerNorm: a row; GroupNorm: a group of a row). Element k of set s is
// z[s * set_stride + k * item_stride]. Writes mean, biased variance, 1/sqrt(var + eps), xhat,
// out = gamma[f] * xhat + beta[f], f = element % width, and a = activation(out) (one dispatch
// fewer than a separate activation kernel); with update_running (BatchNorm sets only), the
// running statistics too (shared/running_stats.wgsl).

@group(0) @binding(1) var<storage, read> z: array<f32>;
@group(0) @binding(2) var<storage, read> params: array<f32>;
@group(0) @binding(3) var<storage, read_write> xhat: array<f32>;
@group(0) @binding(4) var<storage, read_write> out: array<f32>;
@group(0) @binding(5) var<storage, read_write> stats: array<f32>;
@group(0) @binding(6) var<storage, read_write> a: array<f32>;
@group(0) @binding(7) var<storage, read_write> running: array<f32>;

// 16: BatchNorm has one set per feature (64 for a 64-wide layer), and one workgroup runs on one
// thread of a software adapter.
@compute @workgroup_size(16)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let group_index = id.x;
    if group_index >= args.sets {
        return;
    }
    let n = f32(args.len);
    var sum = 0.0;
    for (var k = 0u; k < args.len; k = k + 1u) {
        sum = sum + z[group_index * args.set_stride + k * args.item_stride];
    }
    let mean = sum / n;
    var squares = 0.0;
    for (var k = 0u; k < args.len; k = k + 1u) {
        let d = z[group_index * args.set_stride + k * args.item_stride] - mean;
        squares = squares + d * d;
    }
    let variance = squares / n;
    let rstd = 1.0 / sqrt(variance + args.eps);
    // stats: [mean (sets), variance (sets), rstd (sets)]
    stats[group_index] = mean;
    stats[args.sets + group_index] = variance;
    stats[2u * args.sets + group_index] = rstd;
    if args.update_running != 0u {
        update_running(group_index, mean, variance);
    }
    for (var k = 0u; k < args.len; k = k + 1u) {
        let e = group_index * args.set_stride + k * args.item_stride;
        let f = e % args.width;
        let x = (z[e] - mean) * rstd;
        xhat[e] = x;
        let normed = params[args.gamma_offset + f] * x + params[args.beta_offset + f];
        out[e] = normed;
        // The activation after the norm, fused in (the next layer reads `a`, even for the identity).
        a[e] = activate(args.activation, normed);
    }
}
