// norm_forward.wgsl for BatchNorm-shaped sets (set s is feature s; neighbouring sets are
// neighbouring in memory: set_stride 1, item_stride = width, both sets and width multiples of
// 4): one invocation normalizes four sets at once as the lanes of a vec4, each lane summing its
// set's items in order exactly as the scalar kernel does, and updating the running statistics
// as it does.

@group(0) @binding(1) var<storage, read> z: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> params: array<f32>;
@group(0) @binding(3) var<storage, read_write> xhat: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read_write> out: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read_write> stats: array<f32>;
@group(0) @binding(6) var<storage, read_write> a: array<vec4<f32>>;
@group(0) @binding(7) var<storage, read_write> running: array<f32>;

// 4: a 64-wide layer is 16 invocations, and one workgroup runs on one thread of a software adapter.
@compute @workgroup_size(4)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let quad = id.x;
    let first = 4u * quad;
    if first >= args.sets {
        return;
    }
    let n = f32(args.len);
    let stride = args.item_stride / 4u;
    var sum = vec4<f32>(0.0);
    for (var k = 0u; k < args.len; k = k + 1u) {
        sum = sum + z[k * stride + quad];
    }
    let mean = sum / n;
    var squares = vec4<f32>(0.0);
    for (var k = 0u; k < args.len; k = k + 1u) {
        let d = z[k * stride + quad] - mean;
        squares = squares + d * d;
    }
    let variance = squares / n;
    let rstd = 1.0 / sqrt(variance + args.eps);
    // stats: [mean (sets), variance (sets), rstd (sets)]
    for (var j = 0u; j < 4u; j = j + 1u) {
        stats[first + j] = mean[j];
        stats[args.sets + first + j] = variance[j];
        stats[2u * args.sets + first + j] = rstd[j];
        if args.update_running != 0u {
            update_running(first + j, mean[j], variance[j]);
        }
    }
    let gamma = four(args.gamma_offset + first);
    let beta = four(args.beta_offset + first);
    for (var k = 0u; k < args.len; k = k + 1u) {
        let e = k * stride + quad;
        let x = (z[e] - mean) * rstd;
        xhat[e] = x;
        let normed = gamma * x + beta;
        out[e] = normed;
        a[e] = activate4(args.activation, normed);
    }
}
