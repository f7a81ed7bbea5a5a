// norm_forward.wgsl for LayerNorm- and GroupNorm-shaped sets (a set is contiguous: item_stride
// 1, its length and set_stride multiples of 4): one invocation per set, reading it four items
// at a time. The sums run in four lanes, added at the end (an order of its own, within the
// tolerance against the CPU, and the same however a batch is split: a set lies within one row).

@group(0) @binding(1) var<storage, read> z: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> params: array<f32>;
@group(0) @binding(3) var<storage, read_write> xhat: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read_write> out: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read_write> stats: array<f32>;
@group(0) @binding(6) var<storage, read_write> a: array<vec4<f32>>;

// 16: LayerNorm has one set per row, and one workgroup runs on one thread of a software adapter.
@compute @workgroup_size(16)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let set_index = id.x;
    if set_index >= args.sets {
        return;
    }
    let n = f32(args.len);
    let first = set_index * args.set_stride;
    let base = first / 4u;
    let quads = args.len / 4u;
    var sum = vec4<f32>(0.0);
    for (var k = 0u; k < quads; k = k + 1u) {
        sum = sum + z[base + k];
    }
    let mean = total(sum) / n;
    var squares = vec4<f32>(0.0);
    for (var k = 0u; k < quads; k = k + 1u) {
        let d = z[base + k] - mean;
        squares = squares + d * d;
    }
    let variance = total(squares) / n;
    let rstd = 1.0 / sqrt(variance + args.eps);
    stats[set_index] = mean;
    stats[args.sets + set_index] = variance;
    stats[2u * args.sets + set_index] = rstd;
    // The feature of the set_index's first item; the others follow it.
    let feature = first % args.width;
    for (var k = 0u; k < quads; k = k + 1u) {
        let e = base + k;
        let f = feature + 4u * k;
        let x = (z[e] - mean) * rstd;
        xhat[e] = x;
        let normed = four(args.gamma_offset + f) * x + four(args.beta_offset + f);
        out[e] = normed;
        a[e] = activate4(args.activation, normed);
    }
}
