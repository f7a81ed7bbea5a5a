// Backward of normalize-scale-shift to its input, one invocation per statistic set:
// dz = rstd / n * (n * dxhat - sum(dxhat) - xhat * sum(dxhat * xhat)), dxhat = dout * gamma.

@group(0) @binding(1) var<storage, read> dout: array<f32>;
@group(0) @binding(2) var<storage, read> xhat: array<f32>;
@group(0) @binding(3) var<storage, read> stats: array<f32>;
@group(0) @binding(4) var<storage, read> params: array<f32>;
@group(0) @binding(5) var<storage, read_write> dz: array<f32>;

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
    var dot = 0.0;
    for (var k = 0u; k < args.len; k = k + 1u) {
        let e = group_index * args.set_stride + k * args.item_stride;
        let g = dout[e] * params[args.gamma_offset + e % args.width];
        sum = sum + g;
        dot = dot + g * xhat[e];
    }
    let scale = stats[2u * args.sets + group_index] / n;
    for (var k = 0u; k < args.len; k = k + 1u) {
        let e = group_index * args.set_stride + k * args.item_stride;
        let g = dout[e] * params[args.gamma_offset + e % args.width];
        dz[e] = scale * (n * g - sum - xhat[e] * dot);
    }
}
